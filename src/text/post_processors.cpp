// tokenizer.json's post_processor (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel,
// Sequence) -> the template of special tokens around one text or a pair.
#include "tokenizer_json.hpp"

namespace attnkit::detail {

// Post-processor -> {"single": [...], "pair": [...]} of {"id", "typeId"} (a special token) or
// {"sequence": 0 | 1, "typeId"} items; null when nothing is added. Ids are checked against the
// vocabulary's size (a template must not emit an id the model has no row for).
ATTNKIT_FOR_SIZE Status post_template(const json& p, const std::unordered_map<std::string, int32_t>& vocab, int64_t vocab_size,
                     const std::string& where, json& out) {
  out = nullptr;
  if (p.is_null()) return Status::success();
  if (!p.is_object()) return bad(where, where + " must be an object or null");
  const std::string t = type_of(p);
  if (t == "ByteLevel") return Status::success();  // offsets only: adds no tokens
  if (t == "Sequence") {  // ByteLevel steps and at most one step that adds tokens (Llama 3)
    const json* list = field(p, "processors");
    if (!list || !list->is_array()) return bad(where + ".processors", where + ".processors must be an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      json one;
      Status s = post_template((*list)[i], vocab, vocab_size, where + ".processors[" + std::to_string(i) + "]", one);
      if (!s.ok()) return s;
      if (!one.is_null() && !out.is_null()) {
        return bad(where + ".processors", where + ": only one processor may add special tokens");
      }
      if (!one.is_null()) out = one;
    }
    return Status::success();
  }
  auto special = [&](const char* key, json& item) {
    const json* pair = field(p, key);
    if (!pair || !pair->is_array() || pair->size() != 2 || !(*pair)[0].is_string()) {
      return bad(where + "." + key, where + "." + key + " must be [token, id]");
    }
    int32_t id;
    Status s = token_id((*pair)[1], vocab_size, where + "." + key + "[1]", id);
    if (!s.ok()) return s;
    item = {{"id", id}, {"typeId", 0}};
    return Status::success();
  };
  if (t == "BertProcessing" || t == "RobertaProcessing") {
    json cls, sep;
    Status s = special("cls", cls);
    if (s.ok()) s = special("sep", sep);
    if (!s.ok()) return s;
    const json a = {{"sequence", 0}, {"typeId", 0}};
    if (t == "BertProcessing") {
      json sep1 = sep;
      sep1["typeId"] = 1;
      out = {{"single", {cls, a, sep}}, {"pair", {cls, a, sep, {{"sequence", 1}, {"typeId", 1}}, sep1}}};
    } else {  // RoBERTa: <s> A </s></s> B </s>, all type 0
      out = {{"single", {cls, a, sep}}, {"pair", {cls, a, sep, sep, {{"sequence", 1}, {"typeId", 0}}, sep}}};
    }
    return Status::success();
  }
  if (t == "TemplateProcessing") {
    const json* specials = field(p, "special_tokens");
    if (specials && !specials->is_object()) return bad(where + ".special_tokens", where + ".special_tokens must be an object");
    json result = json::object();
    for (const char* which : {"single", "pair"}) {
      const json* list = field(p, which);
      const std::string at = where + "." + which;
      if (!list || !list->is_array()) return bad(at, at + " must be an array");
      json items = json::array();
      for (std::size_t i = 0; i < list->size(); ++i) {
        const json& piece = (*list)[i];
        const std::string pat = at + "[" + std::to_string(i) + "]";
        const json* st = field(piece, "SpecialToken");
        const json* sq = field(piece, "Sequence");
        if (!st == !sq || !(st ? st : sq)->is_object()) {
          return bad(pat, pat + " must be {\"SpecialToken\": {...}} or {\"Sequence\": {...}}");
        }
        int64_t type_id;
        Status s = int_field(st ? *st : *sq, "type_id", 0, 0, kMaxTypeId, pat, type_id);
        if (!s.ok()) return s;
        if (st) {
          std::string name;
          s = text_field(*st, "id", "", pat + ".SpecialToken", name);
          if (!s.ok()) return s;
          const json* entry = specials ? field(*specials, name.c_str()) : nullptr;
          const json* ids = entry ? field(*entry, "ids") : nullptr;
          int32_t id = -1;
          if (ids) {
            if (!ids->is_array() || ids->size() != 1) {
              return bad(where + ".special_tokens", where + ": the special token '" + name + "' must have exactly one id");
            }
            s = token_id((*ids)[0], vocab_size, where + ".special_tokens." + name + ".ids[0]", id);
            if (!s.ok()) return s;
          } else if (vocab.count(name)) {
            id = vocab.at(name);
          } else {
            return bad(where + ".special_tokens", where + ": the special token '" + name + "' has no id");
          }
          items.push_back({{"id", id}, {"typeId", type_id}});
        } else {
          std::string seq;
          s = text_field(*sq, "id", "A", pat + ".Sequence", seq);
          if (s.ok() && seq != "A" && seq != "B") s = bad(pat + ".Sequence.id", pat + ".Sequence.id must be \"A\" or \"B\"");
          // One text has no second sequence (Hugging Face's apply_template would index past its one
          // encoding): the single template holds A only.
          if (s.ok() && seq == "B" && std::string(which) == "single") {
            s = bad(pat + ".Sequence.id", pat + ": the single template has only sequence \"A\"");
          }
          if (!s.ok()) return s;
          items.push_back({{"sequence", seq == "B" ? 1 : 0}, {"typeId", type_id}});
        }
      }
      result[which] = items;
    }
    out = result;
    return Status::success();
  }
  return bad(where + ".type", where + " type \"" + t +
                                  "\" is not supported (supported: TemplateProcessing, BertProcessing, "
                                  "RobertaProcessing, ByteLevel, Sequence)");
}

}  // namespace attnkit::detail
