// config.json -> model spec: the four families of the fixtures (real Hugging Face key names), the
// rope_scaling spellings, reporting of unknown settings, and rejection of unsupported ones.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnkit/models/model_config.hpp"

using namespace attnkit;
using json = nlohmann::json;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(std::string(ATTNKIT_FIXTURE_DIR) + "/" + path);
  EXPECT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status spec_of(const std::string& text, json& spec) {
  std::string out;
  Status s = model_spec_from_config(text.data(), text.size(), out);
  if (s.ok()) spec = json::parse(out);
  return s;
}

json spec_of(const json& config) {
  json spec;
  Status s = spec_of(config.dump(), spec);
  EXPECT_TRUE(s.ok()) << s.message;
  return spec;
}

std::string error_of(const json& config) {
  json spec;
  Status s = spec_of(config.dump(), spec);
  EXPECT_FALSE(s.ok());
  return s.argument;
}

}  // namespace

TEST(ModelConfig, MapsTheFixtureFamilies) {
  json bert;
  ASSERT_TRUE(spec_of(read_text("models/bert-tiny/config.json"), bert).ok());
  EXPECT_EQ(bert["family"], "bert");
  EXPECT_EQ(bert["numLayers"], 2);
  EXPECT_EQ(bert["embeddings"]["typeVocabSize"], 2);
  EXPECT_EQ(bert["embeddings"]["eps"], 1e-12);
  EXPECT_EQ(bert["layer"]["normPlacement"], "post");
  EXPECT_EQ(bert["layer"]["activation"], "gelu");
  EXPECT_EQ(bert["positionIds"], "arange");
  EXPECT_TRUE(bert["finalNorm"].is_null());
  EXPECT_NE(std::find(bert["ignored"].begin(), bert["ignored"].end(), "hidden_dropout_prob"), bert["ignored"].end());
  EXPECT_TRUE(bert["unknown"].empty()) << bert["unknown"].dump();

  json roberta;
  ASSERT_TRUE(spec_of(read_text("models/roberta-tiny-f16/config.json"), roberta).ok());
  EXPECT_EQ(roberta["positionIds"], "padding");
  EXPECT_EQ(roberta["embeddings"]["paddingIdx"], 1);

  json gpt2;
  ASSERT_TRUE(spec_of(read_text("models/gpt2-tiny/config.json"), gpt2).ok());
  EXPECT_EQ(gpt2["layer"]["weightLayout"], "inOut");
  EXPECT_EQ(gpt2["layer"]["activation"], "gelu_tanh");
  EXPECT_EQ(gpt2["layer"]["ffnDim"], 96);  // n_inner null = 4 * n_embd
  EXPECT_EQ(gpt2["layer"]["causal"], true);
  EXPECT_EQ(gpt2["finalNorm"]["norm"], "layernorm");

  json llama;
  ASSERT_TRUE(spec_of(read_text("models/llama-tiny-bf16/config.json"), llama).ok());
  EXPECT_EQ(llama["layer"]["numKvHeads"], 2);
  EXPECT_EQ(llama["layer"]["ffnGated"], true);
  EXPECT_EQ(llama["layer"]["norm"], "rmsnorm");
  EXPECT_EQ(llama["layer"]["rotary"]["scaling"], json({{"type", "linear"}, {"factor", 2.0}}));
  EXPECT_EQ(llama["finalNorm"]["eps"], 1e-6);
}

TEST(ModelConfig, ReadsBothRopeScalingSpellingsAndReportsUnknownSettings) {
  json c = {{"model_type", "llama"}, {"vocab_size", 10}, {"hidden_size", 8}, {"num_hidden_layers", 1},
            {"num_attention_heads", 2}, {"intermediate_size", 16}, {"max_position_embeddings", 100},
            {"rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}}, {"sliding_window", 4096}};
  json old_spelling = spec_of(c);
  EXPECT_EQ(old_spelling["layer"]["rotary"]["scaling"],
            json({{"type", "dynamic"}, {"factor", 2.0}, {"originalMaxPositions", 100}}));
  EXPECT_EQ(old_spelling["unknown"], json::array({"sliding_window"}));
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 8192}, {"extra", 1}};
  json new_spelling = spec_of(c);
  EXPECT_EQ(new_spelling["layer"]["rotary"]["scaling"]["originalMaxPositions"], 8192);
  EXPECT_EQ(new_spelling["layer"]["rotary"]["scaling"]["lowFreqFactor"], 1.0);
  EXPECT_EQ(new_spelling["unknown"], json::array({"sliding_window", "rope_scaling.extra"}));
  c["rope_scaling"] = {{"rope_type", "default"}};
  EXPECT_FALSE(spec_of(c)["layer"]["rotary"].contains("scaling"));
}

TEST(ModelConfig, RejectsUnsupportedSettingsByName) {
  const json bert = {{"model_type", "bert"}, {"vocab_size", 10}, {"hidden_size", 8}, {"num_hidden_layers", 1},
                     {"num_attention_heads", 2}, {"intermediate_size", 16}};
  EXPECT_TRUE(spec_of(bert)["unknown"].empty());
  auto with = [&](const char* k, const json& v) {
    json c = bert;
    c[k] = v;
    return c;
  };
  // A NUL byte after the object (nlohmann's lexer ended the input there and took the object).
  json ignored;
  EXPECT_EQ(spec_of(bert.dump() + std::string("\0{", 2), ignored).argument, "config");
  EXPECT_EQ(error_of(with("position_embedding_type", "relative_key")), "position_embedding_type");
  EXPECT_EQ(error_of(with("hidden_act", "mish")), "hidden_act");
  EXPECT_EQ(error_of(with("is_decoder", true)), "is_decoder");
  EXPECT_EQ(error_of(with("hidden_size", 8.5)), "hidden_size");
  EXPECT_EQ(error_of(with("num_attention_heads", 3)), "num_attention_heads");
  EXPECT_EQ(error_of(with("model_type", "t5")), "model_type");
  json missing = bert;
  missing.erase("hidden_size");
  EXPECT_EQ(error_of(missing), "hidden_size");
  const json llama = {{"model_type", "llama"}, {"vocab_size", 10}, {"hidden_size", 8}, {"num_hidden_layers", 1},
                      {"num_attention_heads", 4}, {"num_key_value_heads", 3}, {"intermediate_size", 16}};
  EXPECT_EQ(error_of(llama), "num_key_value_heads");
  json longrope = llama;
  longrope["num_key_value_heads"] = 2;
  longrope["rope_scaling"] = {{"rope_type", "longrope"}, {"factor", 2}};
  EXPECT_EQ(error_of(longrope), "rope_scaling.short_factor");  // LongRoPE needs its factors
  longrope["num_attention_heads"] = 2;  // head dim 4: 2 factors each
  longrope["rope_scaling"] = {{"rope_type", "longrope"}, {"short_factor", {1.0}}, {"long_factor", {2.0, 3.0}}};
  EXPECT_EQ(error_of(longrope), "rope_scaling.short_factor");  // rotary dims / 2 = 2 factors each
  longrope["rope_scaling"]["short_factor"] = {1.0, 1.5};
  longrope["original_max_position_embeddings"] = 16;
  const json phi = spec_of(longrope);
  EXPECT_EQ(phi["ropeFactors"], json({1.0, 1.5, 2.0, 3.0}));
  EXPECT_EQ(phi["layer"]["rotary"]["scaling"]["originalMaxPositions"], 16);
  longrope["rope_scaling"]["rope_type"] = "mystery";
  EXPECT_EQ(error_of(longrope), "rope_scaling.rope_type");

  // Issue 33: every rope_scaling setting is checked here, by its config.json key (a factor of 0
  // passed and was refused later as 'scaling.factor'); the values the rotary options take pass.
  json llama3 = llama;
  llama3["num_key_value_heads"] = 2;
  llama3["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                            {"original_max_position_embeddings", 8192}};
  EXPECT_EQ(spec_of(llama3)["layer"]["rotary"]["scaling"]["factor"], 8.0);
  const auto rope = [&](const char* key, const json& v) {
    json c = llama3;
    c["rope_scaling"][key] = v;
    return error_of(c);
  };
  for (const json& v : {json(0), json(-2), json(0.5), json("2"), json(nullptr)}) EXPECT_EQ(rope("factor", v), "rope_scaling.factor") << v;
  EXPECT_EQ(rope("original_max_position_embeddings", 0), "rope_scaling.original_max_position_embeddings");
  EXPECT_EQ(rope("original_max_position_embeddings", 8192.5), "rope_scaling.original_max_position_embeddings");
  EXPECT_EQ(rope("low_freq_factor", 0), "rope_scaling.low_freq_factor");
  EXPECT_EQ(rope("low_freq_factor", -1), "rope_scaling.low_freq_factor");
  EXPECT_EQ(rope("high_freq_factor", 0.5), "rope_scaling.high_freq_factor");  // not above low_freq_factor
  EXPECT_EQ(rope("high_freq_factor", -4), "rope_scaling.high_freq_factor");
  // The other RoPE settings the rotary options would refuse: the base, and an odd head dim.
  llama3["rope_theta"] = 1;
  EXPECT_EQ(error_of(llama3), "rope_theta");
  llama3.erase("rope_theta");
  llama3["head_dim"] = 3;
  EXPECT_EQ(error_of(llama3), "head_dim");
  llama3.erase("head_dim");
  llama3["hidden_size"] = 12;
  llama3["num_attention_heads"] = 4;  // 3 each
  EXPECT_EQ(error_of(llama3), "num_attention_heads");
  llama3["hidden_size"] = 8;
  for (const char* key : {"beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim"}) {
    json c = llama3;
    c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {key, -1}};
    EXPECT_EQ(error_of(c), std::string("rope_scaling.") + key);
    c["rope_scaling"][key] = 1.0;
    EXPECT_EQ(spec_of(c)["layer"]["rotary"]["scaling"]["type"], "yarn") << key;
  }

  json spec;
  EXPECT_EQ(spec_of("{\"model_type\": ", spec).argument, "config");
  EXPECT_EQ(spec_of("[1]", spec).argument, "config");
  EXPECT_EQ(spec_of(std::string(100000, '[') + std::string(100000, ']'), spec).argument, "config");
}

// Generation's token ids: an integer or a list (Llama 3 lists several eos ids), null = none; ids
// are not bounded by the vocabulary (the GPT-2 fixture keeps GPT-2's 50256), but must be ids.
TEST(ModelConfig, ReadsGenerationTokenIds) {
  json gpt2;
  ASSERT_TRUE(spec_of(read_text("models/gpt2-tiny/config.json"), gpt2).ok());
  EXPECT_EQ(gpt2["eosTokenIds"], json::array({50256}));
  EXPECT_EQ(gpt2["bosTokenId"], 50256);
  EXPECT_TRUE(gpt2["padTokenId"].is_null());
  json llama = json::parse(read_text("models/llama-tiny-bf16/config.json"));
  llama["eos_token_id"] = {2, 7};
  llama["pad_token_id"] = nullptr;
  json spec = spec_of(llama);
  EXPECT_EQ(spec["eosTokenIds"], json::array({2, 7}));
  EXPECT_EQ(spec["bosTokenId"], 1);
  EXPECT_TRUE(spec["padTokenId"].is_null());
  EXPECT_TRUE(spec["unknown"].empty()) << spec["unknown"].dump();
  json bert = spec_of(json::parse(read_text("models/bert-tiny/config.json")));
  EXPECT_EQ(bert["padTokenId"], 0);
  EXPECT_EQ(bert["eosTokenIds"], json::array());
  for (const json& bad : {json(-1), json(1.5), json("2"), json::array({1, "x"}), json(std::vector<int>(65, 1))}) {
    llama["eos_token_id"] = bad;
    EXPECT_EQ(error_of(llama), "eos_token_id") << bad.dump();
  }
}
