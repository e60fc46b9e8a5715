// The text ops over string tensors (ONNX operator spec): StringNormalizer (opset 10),
// StringConcat, StringSplit, RegexFullMatch (opset 20), and onnxruntime's Tokenizer
// (com.microsoft), which skl2onnx's text vectorizers use. Reference kernels only: no device
// computes on strings, so these nodes run on the host, between a GPU's device segments
// (runtime/segments.h), as onnxruntime runs them on its CPU provider. Equal, Cast and the
// data moves of strings live with their ops (elementwise.cpp, shape.cpp); LabelEncoder's
// string tables with it (ml.cpp).
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "ir/op_table.h"
#include "ir/ops/op_helpers.h"

namespace fusor {
namespace {

using namespace op_helpers;

void need_strings(InferContext& ctx, int i) {
  if (ctx.dtype(i) != DType::string && ctx.dtype(i) != DType::undefined)
    ctx.fail("input " + std::to_string(i) + " must be string, got " + dtype_name(ctx.dtype(i)));
}

// A padded output (StringSplit, Tokenizer: every string padded to the longest) holds at most
// 2^26 strings (each a std::string: 2 GiB of headers alone): one string of a million tokens
// among a million strings must be one line, not a request for 10^12 of them.
constexpr int64_t kMaxPaddedStrings = int64_t{1} << 26;
void check_string_count(InferContext& ctx, const Shape& y) {
  int64_t n = 1;
  for (int64_t d : y)
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxPaddedStrings)
      ctx.fail("its padded output " + shape_str(y) + " would hold more than " + std::to_string(kMaxPaddedStrings) + " strings");
}

// ASCII case mapping. Bytes of multi-byte UTF-8 sequences are >= 0x80 and pass through: the
// locale attribute's non-ASCII mappings are not applied (README, "Strings").
std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x80) c = static_cast<char>(upper ? std::toupper(u) : std::tolower(u));
  }
  return s;
}

// ---- StringNormalizer ------------------------------------------------------------------------
// X: [C] or [1, C]. Stopwords are removed first (compared case-insensitively unless
// is_case_sensitive), then case_change_action (LOWER / UPPER / NONE) applies. When every
// string is a stopword the output is one empty string, [1] or [1, 1] (the spec's example;
// onnxruntime does the same).

struct Normalizer {
  std::string action;
  bool case_sensitive = false;
  std::vector<std::string> stopwords;  // lowercased unless case-sensitive
};

Normalizer normalizer_of(const Node& n) {
  Normalizer z;
  z.action = n.attr_s("case_change_action", "NONE");
  if (z.action != "NONE" && z.action != "LOWER" && z.action != "UPPER")
    throw Error("shape", n.label() + ": case_change_action '" + printable(z.action) + "' is not NONE, LOWER or UPPER");
  z.case_sensitive = n.attr_i("is_case_sensitive", 0) != 0;
  if (n.has_attr("stopwords"))
    for (const std::string& w : std::get<std::vector<std::string>>(n.attrs.at("stopwords")))
      z.stopwords.push_back(z.case_sensitive ? w : ascii_case(w, false));
  std::sort(z.stopwords.begin(), z.stopwords.end());
  return z;
}

std::vector<std::string> normalize(const Normalizer& z, const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const std::string& s : in) {
    const std::string key = z.case_sensitive ? s : ascii_case(s, false);
    if (std::binary_search(z.stopwords.begin(), z.stopwords.end(), key)) continue;
    out.push_back(z.action == "NONE" ? s : ascii_case(s, z.action == "UPPER"));
  }
  if (out.empty()) out.emplace_back();
  return out;
}

void string_normalizer_infer(InferContext& ctx) {
  need_strings(ctx, 0);
  const Shape& x = ctx.shape(0);
  if (!(x.size() == 1 || (x.size() == 2 && x[0] == 1)))
    ctx.fail("X must be [C] or [1, C], got " + shape_str(x));
  const Normalizer z = normalizer_of(ctx.node());
  // The output length follows the strings when stopwords can remove some.
  int64_t c = x.back();
  if (!z.stopwords.empty() || c == 0) {
    const Tensor& t = ctx.require_contents(0);
    c = static_cast<int64_t>(normalize(z, t.strings).size());
  }
  ctx.set_output(0, DType::string, x.size() == 1 ? Shape{c} : Shape{1, c});
}

void string_normalizer_ref(const Node& n, const Ins& in, Outs& out) {
  const std::vector<std::string> y = normalize(normalizer_of(n), in[0]->strings);
  if (static_cast<int64_t>(y.size()) != out[0].numel()) ref_fail(n, "output size differs from its inferred shape");
  out[0].strings = y;
}

// ---- StringConcat ----------------------------------------------------------------------------

void string_concat_infer(InferContext& ctx) {
  need_strings(ctx, 0), need_strings(ctx, 1);
  ctx.set_output(0, DType::string, broadcast_shapes({ctx.shape(0), ctx.shape(1)}, ctx.node().label()));
}

void string_concat_ref(const Node&, const Ins& in, Outs& out) {
  broadcast_pairs(*in[0], *in[1], out[0].shape(),
                  [&](int64_t o, int64_t a, int64_t b) { out[0].strings[o] = in[0]->strings[a] + in[1]->strings[b]; });
}

// ---- StringSplit -----------------------------------------------------------------------------
// Python's str.split: with a delimiter, every occurrence splits (consecutive ones give empty
// substrings, "" gives [""]); without one (absent or empty), runs of whitespace split and
// leading / trailing whitespace gives nothing ("" gives []). maxsplit bounds the splits, the
// rest staying in the last substring. Y: X's shape + [the most substrings], padded with "";
// Z: the count per string.

std::vector<std::string> split_one(const std::string& s, const std::string& delim, int64_t maxsplit) {
  std::vector<std::string> parts;
  int64_t splits = 0;
  if (!delim.empty()) {
    size_t start = 0;
    for (;;) {
      const size_t at = (maxsplit >= 0 && splits >= maxsplit) ? std::string::npos : s.find(delim, start);
      if (at == std::string::npos) break;
      parts.push_back(s.substr(start, at - start));
      start = at + delim.size();
      ++splits;
    }
    parts.push_back(s.substr(start));
    return parts;
  }
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && space(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && splits >= maxsplit) {  // the rest, trailing whitespace dropped
      size_t end = s.size();
      while (end > i && space(s[end - 1])) --end;
      parts.push_back(s.substr(i, end - i));
      break;
    }
    size_t j = i;
    while (j < s.size() && !space(s[j])) ++j;
    parts.push_back(s.substr(i, j - i));
    ++splits;
    i = j;
  }
  return parts;
}

struct Splitter {
  std::string delim;
  int64_t maxsplit = -1;  // -1: no bound
};

Splitter splitter_of(const Node& n) {
  Splitter s;
  s.delim = n.attr_s("delimiter", "");
  if (n.has_attr("maxsplit")) {
    s.maxsplit = n.attr_i("maxsplit", -1);
    if (s.maxsplit < 0) throw Error("shape", n.label() + ": maxsplit " + std::to_string(s.maxsplit) + " is negative");
  }
  return s;
}

void string_split_infer(InferContext& ctx) {
  need_strings(ctx, 0);
  const Splitter sp = splitter_of(ctx.node());
  int64_t most = 0;
  if (shape_numel(ctx.shape(0)) > 0) {
    const Tensor& t = ctx.require_contents(0);
    for (const std::string& s : t.strings) most = std::max<int64_t>(most, static_cast<int64_t>(split_one(s, sp.delim, sp.maxsplit).size()));
  }
  Shape y = ctx.shape(0);
  y.push_back(most);
  check_string_count(ctx, y);
  ctx.set_output(0, DType::string, y);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::i64, ctx.shape(0));
}

void string_split_ref(const Node& n, const Ins& in, Outs& out) {
  const Splitter sp = splitter_of(n);
  const Tensor& x = *in[0];
  const int64_t most = out[0].shape().back();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const std::vector<std::string> parts = split_one(x.strings[static_cast<size_t>(i)], sp.delim, sp.maxsplit);
    if (static_cast<int64_t>(parts.size()) > most) ref_fail(n, "more substrings than its inferred shape holds");
    for (int64_t k = 0; k < most; ++k)
      out[0].strings[static_cast<size_t>(i * most + k)] = k < static_cast<int64_t>(parts.size()) ? parts[static_cast<size_t>(k)] : std::string();
    if (has_out(out, 1)) out[1].set_int(i, static_cast<int64_t>(parts.size()));
  }
}

// ---- RegexFullMatch --------------------------------------------------------------------------
// Whether each whole string matches `pattern`, RE2 syntax (the spec names RE2; onnxruntime
// uses it too). A pattern RE2 cannot compile is a one-line error at load.

std::string regex_pattern(const Node& n) {
  if (!n.has_attr("pattern")) throw Error("shape", n.label() + ": needs the pattern attribute");
  const std::string p = n.attr_s("pattern", "");
  RE2 re(p, RE2::Quiet);
  if (!re.ok()) throw Error("shape", n.label() + ": pattern '" + printable(p) + "' is not a valid RE2 expression: " + re.error());
  return p;
}

void regex_full_match_infer(InferContext& ctx) {
  need_strings(ctx, 0);
  regex_pattern(ctx.node());
  ctx.set_output(0, DType::boolean, ctx.shape(0));
}

void regex_full_match_ref(const Node& n, const Ins& in, Outs& out) {
  const RE2 re(regex_pattern(n), RE2::Quiet);
  for (int64_t i = 0; i < in[0]->numel(); ++i)
    out[0].set_int(i, RE2::FullMatch(in[0]->strings[static_cast<size_t>(i)], re) ? 1 : 0);
}

// ---- Tokenizer (com.microsoft) ----------------------------------------------------------------
// onnxruntime's contrib op, which skl2onnx's CountVectorizer / TfidfVectorizer exports use:
// X [C] or [N, C] of strings -> X's shape + [the most tokens], padded with pad_value. Tokens
// are the matches of `tokenexp` (RE2), or the text between matches of the `separators` (each an
// RE2 expression; the leftmost match wins, the earlier separator on a tie), or every UTF-8
// character when separators is [""]; a token of fewer than mincharnum characters is dropped;
// with mark, "\x02" and "\x03" frame each string's tokens (the padding follows the end mark, as
// onnxruntime writes it). No token anywhere (all strings empty or separators): the last dim is 0.

size_t utf8_chars(const std::string& s, size_t from, size_t to) {
  size_t n = 0;
  for (size_t i = from; i < to; ++i) n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
  return n;
}

struct TokenizerSpec {
  bool mark = false, chars = false;
  int64_t mincharnum = 1;
  std::string pad;
  std::vector<std::shared_ptr<RE2>> separators;
  std::shared_ptr<RE2> tokenexp;
};

TokenizerSpec tokenizer_of(const Node& n) {
  TokenizerSpec t;
  const auto bad = [&](const std::string& why) { return Error("shape", n.label() + ": " + why); };
  t.mark = n.attr_i("mark", 0) != 0;
  t.mincharnum = n.attr_i("mincharnum", 1);
  if (t.mincharnum < 1) throw bad("mincharnum " + std::to_string(t.mincharnum) + " must be at least 1");
  t.pad = n.attr_s("pad_value", "#");
  std::vector<std::string> seps;
  if (n.has_attr("separators")) seps = std::get<std::vector<std::string>>(n.attrs.at("separators"));
  const std::string exp = n.attr_s("tokenexp", "");
  if (!seps.empty() && !exp.empty()) throw bad("has both separators and tokenexp (one of them)");
  if (seps.empty() && exp.empty()) throw bad("needs separators or tokenexp");
  const auto compile = [&](const std::string& p) {
    auto re = std::make_shared<RE2>(p, RE2::Quiet);
    if (!re->ok()) throw bad("'" + printable(p) + "' is not a valid RE2 expression: " + re->error());
    return re;
  };
  if (!exp.empty()) {
    t.tokenexp = compile(exp);
  } else if (seps.size() == 1 && seps[0].empty()) {
    t.chars = true;
    if (t.mincharnum > 1) throw bad("mincharnum " + std::to_string(t.mincharnum) + " with character tokens (separators [\"\"])");
  } else {
    for (const std::string& p : seps) {
      if (p.empty()) throw bad("an empty separator among others");
      t.separators.push_back(compile(p));
    }
  }
  return t;
}

std::vector<std::string> tokenize(const TokenizerSpec& t, const std::string& s) {
  std::vector<std::string> out;
  const auto keep = [&](size_t from, size_t to) {
    if (to > from && static_cast<int64_t>(utf8_chars(s, from, to)) >= t.mincharnum) out.push_back(s.substr(from, to - from));
  };
  if (t.chars) {
    for (size_t i = 0; i < s.size();) {
      size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
    }
    return out;
  }
  const re2::StringPiece text(s);
  if (t.tokenexp) {
    size_t at = 0;
    re2::StringPiece m;
    while (at <= s.size() && t.tokenexp->Match(text, at, s.size(), RE2::UNANCHORED, &m, 1)) {
      const size_t from = static_cast<size_t>(m.data() - s.data()), to = from + m.size();
      keep(from, to);
      at = to > from ? to : from + 1;  // an empty match moves on one byte
    }
    return out;
  }
  size_t at = 0, token = 0;
  while (at < s.size()) {
    size_t best = std::string::npos, best_end = 0;
    for (const auto& re : t.separators) {
      re2::StringPiece m;
      if (!re->Match(text, at, s.size(), RE2::UNANCHORED, &m, 1) || m.empty()) continue;
      const size_t from = static_cast<size_t>(m.data() - s.data());
      if (from < best) best = from, best_end = from + m.size();
    }
    if (best == std::string::npos) break;
    keep(token, best);
    token = at = best_end;
  }
  keep(token, s.size());
  return out;
}

void tokenizer_infer(InferContext& ctx) {
  need_strings(ctx, 0);
  const Shape& x = ctx.shape(0);
  if (x.size() != 1 && x.size() != 2) ctx.fail("X must be [C] or [N, C], got " + shape_str(x));
  const TokenizerSpec t = tokenizer_of(ctx.node());
  int64_t most = 0;
  if (shape_numel(x) > 0)
    for (const std::string& s : ctx.require_contents(0).strings) most = std::max<int64_t>(most, static_cast<int64_t>(tokenize(t, s).size()));
  Shape y = x;
  y.push_back(most == 0 ? 0 : most + (t.mark ? 2 : 0));
  check_string_count(ctx, y);
  ctx.set_output(0, DType::string, y);
}

void tokenizer_ref(const Node& n, const Ins& in, Outs& out) {
  const TokenizerSpec t = tokenizer_of(n);
  const int64_t width = out[0].shape().back();
  if (width == 0) return;
  for (int64_t i = 0; i < in[0]->numel(); ++i) {
    const std::vector<std::string> tok = tokenize(t, in[0]->strings[static_cast<size_t>(i)]);
    std::string* row = out[0].strings.data() + i * width;
    int64_t k = 0;
    if (t.mark) row[k++] = "\x02";
    for (const std::string& w : tok) {
      if (k >= width - (t.mark ? 1 : 0)) ref_fail(n, "more tokens than its inferred shape holds");
      row[k++] = w;
    }
    if (t.mark) row[k++] = "\x03";
    while (k < width) row[k++] = t.pad;  // after the end mark, as onnxruntime pads
  }
}

OpDef string_op(std::string name, int min_in, int max_in, InferFn infer, ReferenceFn ref, int max_out = 1) {
  OpDef d = table_entry(std::move(name), min_in, max_in, std::move(infer), std::move(ref), max_out);
  d.strings = true;
  return d;
}

}  // namespace

void register_string_ops() {
  register_op(string_op("StringNormalizer", 1, 1, string_normalizer_infer, string_normalizer_ref));
  register_op(string_op("StringConcat", 2, 2, string_concat_infer, string_concat_ref));
  register_op(string_op("StringSplit", 1, 1, string_split_infer, string_split_ref, 2));
  register_op(string_op("RegexFullMatch", 1, 1, regex_full_match_infer, regex_full_match_ref));
  register_op(string_op("com.microsoft.Tokenizer", 1, 1, tokenizer_infer, tokenizer_ref));
}

}  // namespace fusor
