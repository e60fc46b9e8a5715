// The text ops over string tensors (ONNX operator spec): StringNormalizer (opset 10),
// StringConcat, StringSplit, RegexFullMatch (opset 20), and onnxruntime's Tokenizer
// (com.microsoft), which skl2onnx's text vectorizers use. Reference kernels only: no device
// computes on strings, so these nodes run on the host, between a GPU's device segments
// (runtime/segments.h), as onnxruntime runs them on its CPU provider. Equal, Cast and the
// data moves of strings live with their ops (elementwise.cpp, shape.cpp); LabelEncoder's
// string tables with it (ml.cpp).
#include <re2/re2.h>

#include <algorithm>
#include <clocale>
#include <cctype>
#include <climits>
#include <cwchar>
#include <cwctype>
#include <locale.h>
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

// ASCII case mapping (the fallback where the C library has no C.UTF-8 locale).
std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x80) c = static_cast<char>(upper ? std::toupper(u) : std::tolower(u));
  }
  return s;
}

// Unicode simple case mapping, one code point to one (U+00DF stays, U+0130 lowers to 'i'), by
// the C library's towupper / towlower under C.UTF-8: what onnxruntime's ctype<wchar_t> gives
// for a UTF-8 locale. Bytes that are not well-formed UTF-8 pass through unchanged.
std::string unicode_case(const std::string& s, bool upper) {
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  if (!utf8) return ascii_case(s, upper);
  // mbrtowc / wcrtomb read the thread's locale: switched for this call only.
  struct Use {
    locale_t old;
    ~Use() { uselocale(old); }
  } use{uselocale(utf8)};
  std::string out;
  out.reserve(s.size());
  std::mbstate_t in{};
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {  // ASCII (NUL included): one byte
      out.push_back(static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(s[i])) : std::tolower(static_cast<unsigned char>(s[i]))));
      ++i;
      continue;
    }
    wchar_t w = 0;
    const size_t n = std::mbrtowc(&w, s.data() + i, s.size() - i, &in);
    if (n == 0 || n > s.size() - i) {  // malformed or cut short: the byte as it is
      out.push_back(s[i]), ++i, in = std::mbstate_t{};
      continue;
    }
    char buf[MB_LEN_MAX];
    std::mbstate_t o{};
    const size_t k = std::wcrtomb(buf, static_cast<wchar_t>(upper ? std::towupper(static_cast<wint_t>(w)) : std::towlower(static_cast<wint_t>(w))), &o);
    if (k == static_cast<size_t>(-1)) out.append(s, i, n);
    else out.append(buf, k);
    i += n;
  }
  return out;
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
    for (const std::string& w : n.attr_strings("stopwords"))
      z.stopwords.push_back(z.case_sensitive ? w : unicode_case(w, false));
  std::sort(z.stopwords.begin(), z.stopwords.end());
  return z;
}

std::vector<std::string> normalize(const Normalizer& z, const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const std::string& s : in) {
    const std::string key = z.case_sensitive ? s : unicode_case(s, false);
    if (std::binary_search(z.stopwords.begin(), z.stopwords.end(), key)) continue;
    out.push_back(z.action == "NONE" ? s : unicode_case(s, z.action == "UPPER"));
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
// Python's str.split, as the ONNX reference computes it: with a delimiter, every occurrence
// splits (consecutive ones give empty substrings, "" gives [""]); without one (absent or empty),
// runs of ASCII whitespace split and leading / trailing whitespace gives nothing ("" gives []).
// maxsplit bounds the splits, the rest (its trailing whitespace too) staying in the last
// substring. (onnxruntime 1.32 splits only on ' ' without a delimiter.) Y: X's shape + [the most substrings], padded with "";
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
  // Python's str.isspace over ASCII: \t \n \v \f \r, \x1c-\x1f and the space (not the Unicode spaces).
  const auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); };
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && space(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && splits >= maxsplit) {  // the rest as it is, trailing whitespace kept (Python)
      parts.push_back(s.substr(i));
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
  s.maxsplit = std::max<int64_t>(n.attr_i("maxsplit", -1), -1);  // negative: no bound (Python's -1, onnxruntime)
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
// onnxruntime's contrib op (its kernel is the definition), which skl2onnx's CountVectorizer /
// TfidfVectorizer exports use: X [C] or [N, C] of UTF-8 strings -> X's shape + [the most
// tokens], padded with pad_value after the marks. RE2 expressions, longest match:
//   separators [""] or tokenexp ".": every UTF-8 character is a token;
//   tokenexp: the matches, scanned left to right (a match shorter than mincharnum characters is
//     skipped one character on);
//   separators: the string is split by the first separator, each piece by the second, and so
//     on; a piece of fewer than mincharnum characters is dropped at every pass.
// mark frames each string's tokens with "\x02" and "\x03". No token anywhere: the last dim is 0.
// An empty X gives [N, 0] ([N, C] with N or C zero) or [0] (onnxruntime's kernel).

// Bytes of the UTF-8 sequence whose lead byte is c (1 for a stray continuation byte).
size_t utf8_seq(unsigned char c) { return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

size_t utf8_chars(const char* p, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) k += (static_cast<unsigned char>(p[i]) & 0xC0) != 0x80;
  return k;
}

bool utf8_valid(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80 && (c < 0xC2 || c > 0xF4)) return false;
    const size_t n = utf8_seq(c);
    if (i + n > s.size()) return false;
    for (size_t j = 1; j < n; ++j)
      if ((static_cast<unsigned char>(s[i + j]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
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
  const std::vector<std::string> seps = n.attr_strings("separators");
  const std::string exp = n.attr_s("tokenexp", "");
  if (n.has_attr("separators") && seps.empty()) throw bad("separators is empty");
  if (seps.empty() && exp.empty()) throw bad("needs separators or a non-empty tokenexp");
  RE2::Options o;
  o.set_longest_match(true);
  o.set_log_errors(false);
  const auto compile = [&](const std::string& p) {
    auto re = std::make_shared<RE2>(p, o);
    if (!re->ok()) throw bad("'" + printable(p) + "' is not a valid RE2 expression: " + re->error());
    return re;
  };
  t.chars = seps.empty() ? exp == "." : seps.size() == 1 && seps[0].empty();
  if (t.chars && t.mincharnum > 1) throw bad("mincharnum " + std::to_string(t.mincharnum) + " with character tokens");
  if (t.chars) return t;
  if (seps.empty()) t.tokenexp = compile(exp);
  for (const std::string& p : seps) t.separators.push_back(compile(p));
  return t;
}

std::vector<re2::StringPiece> tokenize(const Node& n, const TokenizerSpec& t, const std::string& s) {
  if (!utf8_valid(s)) throw Error("ref", n.label() + ": input string '" + printable(s) + "' is not valid UTF-8");
  std::vector<re2::StringPiece> out;
  const auto enough = [&](const char* p, size_t len) { return static_cast<int64_t>(utf8_chars(p, len)) >= t.mincharnum; };
  if (t.chars) {
    for (size_t i = 0; i < s.size(); i += utf8_seq(static_cast<unsigned char>(s[i]))) out.emplace_back(s.data() + i, utf8_seq(static_cast<unsigned char>(s[i])));
    return out;
  }
  if (t.tokenexp) {
    const re2::StringPiece text(s);
    re2::StringPiece m;
    for (size_t at = 0; at <= s.size() && t.tokenexp->Match(text, at, s.size(), RE2::UNANCHORED, &m, 1);) {
      const size_t from = static_cast<size_t>(m.data() - s.data());
      if (!m.empty() && enough(m.data(), m.size())) {
        out.push_back(m);
        at = from + m.size();
      } else {
        at = from + (from < s.size() ? utf8_seq(static_cast<unsigned char>(s[from])) : 1);
      }
    }
    return out;
  }
  out.emplace_back(s);
  for (const auto& re : t.separators) {
    std::vector<re2::StringPiece> pieces;
    for (const re2::StringPiece& text : out) {
      size_t at = 0;
      re2::StringPiece m;
      while (at <= text.size() && re->Match(text, at, text.size(), RE2::UNANCHORED, &m, 1)) {
        const size_t from = static_cast<size_t>(m.data() - text.data());
        if (enough(text.data() + at, from - at) && from > at) pieces.emplace_back(text.data() + at, from - at);
        at = from + (m.empty() ? (from < text.size() ? utf8_seq(static_cast<unsigned char>(text[from])) : 1) : m.size());
      }
      if (at < text.size() && enough(text.data() + at, text.size() - at)) pieces.emplace_back(text.data() + at, text.size() - at);
    }
    out.swap(pieces);
  }
  return out;
}

void tokenizer_infer(InferContext& ctx) {
  need_strings(ctx, 0);
  const Shape& x = ctx.shape(0);
  if (x.size() != 1 && x.size() != 2) ctx.fail("X must be [C] or [N, C], got " + shape_str(x));
  const TokenizerSpec t = tokenizer_of(ctx.node());
  int64_t most = 0;
  if (shape_numel(x) > 0)
    for (const std::string& s : ctx.require_contents(0).strings)
      most = std::max<int64_t>(most, static_cast<int64_t>(tokenize(ctx.node(), t, s).size()));
  Shape y = x;
  if (shape_numel(x) > 0) y.push_back(most == 0 ? 0 : most + (t.mark ? 2 : 0));
  else y = x.size() == 2 ? Shape{x[0], 0} : Shape{0};  // onnxruntime's kernel: no token axis
  check_string_count(ctx, y);
  ctx.set_output(0, DType::string, y);
}

void tokenizer_ref(const Node& n, const Ins& in, Outs& out) {
  const TokenizerSpec t = tokenizer_of(n);
  if (in[0]->numel() == 0) return;
  const int64_t width = out[0].shape().back();
  if (width == 0) return;
  for (int64_t i = 0; i < in[0]->numel(); ++i) {
    const std::vector<re2::StringPiece> tok = tokenize(n, t, in[0]->strings[static_cast<size_t>(i)]);
    std::string* row = out[0].strings.data() + i * width;
    int64_t k = 0;
    if (t.mark) row[k++] = "\x02";
    for (const re2::StringPiece& w : tok) {
      if (k >= width - (t.mark ? 1 : 0)) ref_fail(n, "more tokens than its inferred shape holds");
      row[k++].assign(w.data(), w.size());
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
