// BERT's character classes (tokenizers' BertNormalizer / BertPreTokenizer).
// Shared by the normalizers, the pre-tokenizers and the added tokens' lstrip / rstrip.
// BertNormalizer's is_control: Cc, Cf and private use (Co) go, as in Hugging Face's tokenizers.
export const isControl = (c) => c !== '\t' && c !== '\n' && c !== '\r' && /[\p{Cc}\p{Cf}\p{Co}]/u.test(c);
export const isWhitespace = (c) => /\s/u.test(c);
export const isPunctuation = (c) => {
  const x = c.codePointAt(0);
  return (x >= 33 && x <= 47) || (x >= 58 && x <= 64) || (x >= 91 && x <= 96) || (x >= 123 && x <= 126) || /\p{P}/u.test(c);
};
export const isChinese = (x) => (x >= 0x4E00 && x <= 0x9FFF) || (x >= 0x3400 && x <= 0x4DBF) || (x >= 0x20000 && x <= 0x2A6DF) ||
  (x >= 0x2A700 && x <= 0x2B73F) || (x >= 0x2B740 && x <= 0x2B81F) || (x >= 0x2B820 && x <= 0x2CEAF) ||
  (x >= 0xF900 && x <= 0xFAFF) || (x >= 0x2F800 && x <= 0x2FA1F);
