// Writes src/text/unicode_tables.cpp: the Unicode properties the C++ text steps of the WordPiece and
// byte-level BPE tokenizers need, read from this JavaScript engine (so that they agree exactly
// with the JavaScript steps and with transformers.js on the same engine): per code point the
// classes \p{L}, \p{N}, \p{P}, \p{Mn}, \p{M}, \p{Cc}|\p{Cf}, \s, \p{Alphabetic}; String.toLowerCase and
// String.normalize('NFD') of each single code point where they change it; the general category of
// every code point and its script (for the Split pre-tokenizer's regular expressions).
//   node scripts/gen_unicode.mjs        (the output is committed; the build never runs this)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../src/unicode_tables.cpp');
const tests = [
  [1, /\p{L}/u], [2, /\p{N}/u], [4, /\p{P}/u], [8, /\p{Mn}/u], [16, /\p{M}/u], [32, /[\p{Cc}\p{Cf}]/u], [64, /\s/u], [128, /\p{Alphabetic}/u],
];
// The general categories, in the order of unicode::Category.
const CATEGORIES = ['Lu', 'Ll', 'Lt', 'Lm', 'Lo', 'Mn', 'Mc', 'Me', 'Nd', 'Nl', 'No', 'Pc', 'Pd', 'Ps', 'Pe', 'Pi', 'Pf',
  'Po', 'Sm', 'Sc', 'Sk', 'So', 'Zs', 'Zl', 'Zp', 'Cc', 'Cf', 'Cs', 'Co', 'Cn'];
const categoryTests = CATEGORIES.map((c) => new RegExp(`\\p{gc=${c}}`, 'u'));
const categoryRuns = [];  // [first code point, category] where the category changes
// The Unicode scripts (Script, not Script_Extensions) this engine knows, by long name; index 0 of
// the table is Unknown. The list is checked complete below: every code point is in one of them or
// in Unknown.
const SCRIPTS = [
  'Adlam', 'Ahom', 'Anatolian_Hieroglyphs', 'Arabic', 'Armenian', 'Avestan', 'Balinese', 'Bamum',
  'Bassa_Vah', 'Batak', 'Bengali', 'Beria_Erfe', 'Bhaiksuki', 'Bopomofo', 'Brahmi', 'Braille',
  'Buginese', 'Buhid', 'Canadian_Aboriginal', 'Carian', 'Caucasian_Albanian', 'Chakma', 'Cham',
  'Cherokee', 'Chorasmian', 'Common', 'Coptic', 'Cuneiform', 'Cypriot', 'Cypro_Minoan', 'Cyrillic',
  'Deseret', 'Devanagari', 'Dives_Akuru', 'Dogra', 'Duployan', 'Egyptian_Hieroglyphs', 'Elbasan',
  'Elymaic', 'Ethiopic', 'Garay', 'Georgian', 'Glagolitic', 'Gothic', 'Grantha', 'Greek', 'Gujarati',
  'Gunjala_Gondi', 'Gurmukhi', 'Gurung_Khema', 'Han', 'Hangul', 'Hanifi_Rohingya', 'Hanunoo',
  'Hatran', 'Hebrew', 'Hiragana', 'Imperial_Aramaic', 'Inherited', 'Inscriptional_Pahlavi',
  'Inscriptional_Parthian', 'Javanese', 'Kaithi', 'Kannada', 'Katakana', 'Kawi', 'Kayah_Li',
  'Kharoshthi', 'Khitan_Small_Script', 'Khmer', 'Khojki', 'Khudawadi', 'Kirat_Rai', 'Lao', 'Latin',
  'Lepcha', 'Limbu', 'Linear_A', 'Linear_B', 'Lisu', 'Lycian', 'Lydian', 'Mahajani', 'Makasar',
  'Malayalam', 'Mandaic', 'Manichaean', 'Marchen', 'Masaram_Gondi', 'Medefaidrin', 'Meetei_Mayek',
  'Mende_Kikakui', 'Meroitic_Cursive', 'Meroitic_Hieroglyphs', 'Miao', 'Modi', 'Mongolian', 'Mro',
  'Multani', 'Myanmar', 'Nabataean', 'Nag_Mundari', 'Nandinagari', 'New_Tai_Lue', 'Newa', 'Nko',
  'Nushu', 'Nyiakeng_Puachue_Hmong', 'Ogham', 'Ol_Chiki', 'Ol_Onal', 'Old_Hungarian', 'Old_Italic',
  'Old_North_Arabian', 'Old_Permic', 'Old_Persian', 'Old_Sogdian', 'Old_South_Arabian', 'Old_Turkic',
  'Old_Uyghur', 'Oriya', 'Osage', 'Osmanya', 'Pahawh_Hmong', 'Palmyrene', 'Pau_Cin_Hau', 'Phags_Pa',
  'Phoenician', 'Psalter_Pahlavi', 'Rejang', 'Runic', 'Samaritan', 'Saurashtra', 'Sharada', 'Shavian',
  'Siddham', 'Sidetic', 'SignWriting', 'Sinhala', 'Sogdian', 'Sora_Sompeng', 'Soyombo', 'Sundanese',
  'Sunuwar', 'Syloti_Nagri', 'Syriac', 'Tagalog', 'Tagbanwa', 'Tai_Le', 'Tai_Tham', 'Tai_Viet',
  'Tai_Yo', 'Takri', 'Tamil', 'Tangsa', 'Tangut', 'Telugu', 'Thaana', 'Thai', 'Tibetan', 'Tifinagh',
  'Tirhuta', 'Todhri', 'Tolong_Siki', 'Toto', 'Tulu_Tigalari', 'Ugaritic', 'Vai', 'Vithkuqi',
  'Wancho', 'Warang_Citi', 'Yezidi', 'Yi', 'Zanabazar_Square',
];
const scriptOf = new Uint8Array(0x110000);  // 0 = Unknown
{
  let all = '';
  for (let cp = 0; cp < 0x110000; cp++) if (cp < 0xD800 || cp > 0xDFFF) all += String.fromCodePoint(cp);
  SCRIPTS.forEach((name, k) => {
    for (const m of all.matchAll(new RegExp(`\\p{Script=${name}}`, 'gu'))) scriptOf[m[0].codePointAt(0)] = k + 1;
  });
  const unknown = /\p{Script=Unknown}/u;
  for (let cp = 0; cp < 0x110000; cp++) {
    if ((cp < 0xD800 || cp > 0xDFFF) && !scriptOf[cp] && !unknown.test(String.fromCodePoint(cp))) {
      throw new Error(`U+${cp.toString(16)} has a script the list lacks`);
    }
  }
}
const scriptRuns = [];  // [first code point, script index] where the script changes
for (let cp = 0; cp < 0x110000; cp++) {
  if (!scriptRuns.length || scriptRuns[scriptRuns.length - 1][1] !== scriptOf[cp]) scriptRuns.push([cp, scriptOf[cp]]);
}
const ranges = [];
const lower = [], nfd = [];
let prev = -1, start = 0;
for (let cp = 0; cp <= 0x110000; cp++) {
  if (cp < 0x110000) {
    const c = String.fromCodePoint(cp);
    let k = cp >= 0xD800 && cp <= 0xDFFF ? CATEGORIES.indexOf('Cs') : categoryTests.findIndex((re) => re.test(c));
    if (k < 0) throw new Error(`no category for U+${cp.toString(16)}`);
    if (!categoryRuns.length || categoryRuns[categoryRuns.length - 1][1] !== k) categoryRuns.push([cp, k]);
  }
  let flags = -2;
  if (cp < 0x110000 && !(cp >= 0xD800 && cp <= 0xDFFF)) {
    const c = String.fromCodePoint(cp);
    flags = 0;
    for (const [bit, re] of tests) if (re.test(c)) flags |= bit;
    const lo = c.toLowerCase();
    if (lo !== c) lower.push([cp, [...lo].map((x) => x.codePointAt(0))]);
    const d = c.normalize('NFD');
    // Hangul syllables decompose by arithmetic (unicode.cpp), not by table.
    if (d !== c && !(cp >= 0xAC00 && cp <= 0xD7A3)) nfd.push([cp, [...d].map((x) => x.codePointAt(0))]);
  } else if (cp < 0x110000) {
    flags = 0;  // surrogates: no class
  }
  if (flags !== prev) {
    if (prev > 0) ranges.push([start, cp - 1, prev]);
    start = cp;
    prev = flags;
  }
}
const mapping = (name, list) => {
  const data = [];
  const index = list.map(([cp, out]) => {
    const at = data.length;
    data.push(...out);
    return `0x${(BigInt(cp) << 32n | BigInt(at) << 8n | BigInt(out.length)).toString(16)}`;
  });
  return `// code point << 32 | offset into k${name}Data << 8 | length, sorted by code point\n` +
    `const uint64_t k${name}[] = {${index.join(', ')}};\nconst uint32_t k${name}Data[] = {${data.join(', ')}};\n` +
    `const std::size_t k${name}Count = ${list.length};\n`;
};
const text = `// Generated by scripts/gen_unicode.mjs from ${process.release.name} ${process.version} (ICU ${process.versions.icu},
// Unicode ${process.versions.unicode}). Do not edit: re-run the script.
#include "attnkit/text/unicode.hpp"

namespace attnkit::unicode {

// [first, last] code points with the same class flags, as first << 32 | last << 8 | flags (only
// ranges with a flag are listed), sorted.
const uint64_t kRanges[] = {${ranges.map(([a, b, f]) => `0x${(BigInt(a) << 32n | BigInt(b) << 8n | BigInt(f)).toString(16)}`).join(', ')}};
const std::size_t kRangeCount = ${ranges.length};
${mapping('Lower', lower)}${mapping('Nfd', nfd)}
// The general category from each listed code point on (to the next), as first << 5 | Category.
const uint32_t kCategoryRuns[] = {${categoryRuns.map(([a, k]) => `0x${(a * 32 + k).toString(16)}`).join(', ')}};
const std::size_t kCategoryRunCount = ${categoryRuns.length};
// The script from each listed code point on (to the next), as first << 8 | index into
// kScriptNames (0: Unknown).
const uint32_t kScriptRuns[] = {${scriptRuns.map(([a, k]) => `0x${(a * 256 + k).toString(16)}`).join(', ')}};
const std::size_t kScriptRunCount = ${scriptRuns.length};
const char* const kScriptNames[] = {"Unknown", ${SCRIPTS.map((n) => `"${n}"`).join(', ')}};
const std::size_t kScriptCount = ${SCRIPTS.length + 1};
}  // namespace attnkit::unicode
`;
fs.writeFileSync(OUT, text);
console.log(`wrote ${OUT}: ${ranges.length} ranges, ${lower.length} lowercase and ${nfd.length} NFD mappings, ${categoryRuns.length} category runs, ${scriptRuns.length} script runs of ${SCRIPTS.length} scripts`);
