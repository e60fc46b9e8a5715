// Text helpers shared by the emitter's files (internal to backends/): operand/parameter
// substitution and intrinsic renaming of op-table expressions.
#pragma once
#include <algorithm>
#include <cctype>
#include <string>

#include "backends/codegen.h"

namespace fusor::codegen_text {

inline bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Substitutes "{k}" operands (via operand(k)) and "{name}" params (via param(name)) in one
// pass so replacement text is never rescanned.
template <class F, class G> std::string substitute(const std::string& ex, F operand, G param) {
  std::string out;
  for (size_t i = 0; i < ex.size();) {
    size_t close = ex[i] == '{' ? ex.find('}', i) : std::string::npos;
    if (close != std::string::npos) {
      std::string key = ex.substr(i + 1, close - i - 1);
      if (!key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        out += operand(std::stoi(key));
      else
        out += param(key);
      i = close + 1;
      continue;
    }
    out += ex[i++];
  }
  return out;
}

// Renames identifiers that are called (followed by '(') through d.typed_intrinsic(name, math).
std::string rename_intrinsics(const std::string& ex, const Dialect& d, DType math = DType::f32);

}  // namespace fusor::codegen_text
