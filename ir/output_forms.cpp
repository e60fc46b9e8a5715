// String labels and ZipMap at a model's outputs (ir/output_forms.h).
#include "ir/output_forms.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace fusor {
namespace {

using Form = Graph::OutputForm;

// The int label attribute each classifier takes in place of classlabels_strings (ONNX-ML spec).
const char* int_label_attr(const Node& n) {
  if (n.domain != "ai.onnx.ml") return nullptr;
  if (n.op_type == "LinearClassifier" || n.op_type == "SVMClassifier") return "classlabels_ints";
  if (n.op_type == "TreeEnsembleClassifier") return "classlabels_int64s";
  return nullptr;
}

// Whether input j of n is data the op only moves (input 0 of a data move, any input of Concat;
// the other inputs are shapes / indices); with_extractor: ArrayFeatureExtractor counts too.
bool moves_input(const Node& n, size_t j, bool with_extractor) {
  static const std::set<std::string> ops = {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
                                            "Slice",    "Gather",  "Expand",  "Tile",    "Concat"};
  if (with_extractor && n.op_type == "ArrayFeatureExtractor" && n.domain == "ai.onnx.ml") return j == 0;
  return (n.domain.empty() || n.domain == "ai.onnx") && ops.count(n.op_type) != 0 && (j == 0 || n.op_type == "Concat");
}

// A string-to-number encoder over string input codes: the strings it compares with (the
// attribute holding them), else nullptr.
const char* string_keys_attr(const Node& n) {
  if (n.domain != "ai.onnx.ml") return nullptr;
  if (n.op_type == "OneHotEncoder" || n.op_type == "CategoryMapper") return "cats_strings";
  if (n.op_type == "LabelEncoder") return "keys_strings";
  return nullptr;
}

}  // namespace

void encode_string_inputs(Graph& g) {
  if (!g.string_inputs.empty()) return;  // already rewritten
  // Per string input: the values its codes would reach (through data moves), the nodes reading
  // them, the encoders among those, and whether every use is an encoder's or a move's (else the
  // input stays a string: a text op, Equal, a string output... run on the host, OpDef::strings).
  struct Reach {
    bool ok = true;
    std::set<int> values;
    std::set<size_t> readers;
    std::vector<size_t> encoders;
  };
  const auto reach_of = [&](int input) {
    Reach r;
    r.values.insert(input);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      bool reads = false, encoder = false;
      for (size_t j = 0; j < n.inputs.size(); ++j) {
        if (!r.values.count(n.inputs[j])) continue;
        reads = true;
        r.readers.insert(i);
        if (moves_input(n, j, true)) continue;
        const char* keys = string_keys_attr(n);
        const Tensor* vt = n.attr_t("values_tensor");
        if (!(keys && j == 0 && n.has_attr(keys)) ||
            (n.op_type == "LabelEncoder" && (n.has_attr("values_strings") || (vt && vt->dtype() == DType::string))))
          r.ok = false;
        else
          encoder = true;
      }
      if (encoder) r.encoders.push_back(i);
      else if (reads)
        for (int o : n.outputs)
          if (o >= 0) r.values.insert(o);
    }
    for (int v : g.outputs)
      if (r.values.count(v)) r.ok = false;
    return r;
  };
  std::vector<std::pair<size_t, Reach>> reach;  // (input index, its reach)
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.values[g.inputs[i]].dtype == DType::string) reach.emplace_back(i, reach_of(g.inputs[i]));
  if (reach.empty()) return;
  // An input sharing a reader with a kept one is kept too (a Concat of both cannot be half codes).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& ra : reach)
      for (const auto& rb : reach) {
        Reach& a = ra.second;
        const Reach& b = rb.second;
        if (a.ok && !b.ok && std::any_of(a.readers.begin(), a.readers.end(), [&b](size_t k) { return b.readers.count(k) > 0; }))
          a.ok = false, changed = true;
      }
  }
  g.string_inputs.assign(g.inputs.size(), 0);
  std::set<std::string> table;
  for (const auto& [i, r] : reach)
    if (r.ok)
      for (size_t e : r.encoders)
        for (const std::string& k : g.nodes[e].attr_strings(string_keys_attr(g.nodes[e]))) table.insert(k);
  g.input_strings.assign(table.begin(), table.end());
  const auto code = [&](const std::string& s) {
    return static_cast<int64_t>(std::lower_bound(g.input_strings.begin(), g.input_strings.end(), s) - g.input_strings.begin());
  };
  for (const auto& [input, r] : reach) {
    if (!r.ok) continue;
    for (size_t i : r.encoders) {
      Node& n = g.nodes[i];
      const char* keys = string_keys_attr(n);
      if (!n.has_attr(keys)) continue;  // rewritten already (an encoder two coded inputs reach)
      std::vector<int64_t> codes;
      for (const std::string& k : n.attr_strings(keys)) codes.push_back(code(k));
      n.attrs.erase(keys);
      if (n.op_type == "OneHotEncoder") {
        n.attrs["cats_int64s"] = codes;
      } else if (n.op_type == "LabelEncoder") {
        n.attrs["keys_int64s"] = codes;
      } else {  // CategoryMapper (strings to int64s) as the LabelEncoder it is
        n.op_type = "LabelEncoder";
        n.opset = std::max(n.opset, 2);
        std::vector<int64_t> values = n.attr_ints("cats_int64s");
        n.attrs.erase("cats_int64s");
        n.attrs.erase("default_string");
        const int64_t dflt = n.attr_i("default_int64", -1);
        n.attrs["keys_int64s"] = codes;
        n.attrs["values_int64s"] = values;
        n.attrs["default_int64"] = dflt;
      }
      n.check_types = false;  // its declared string input is int64 codes now
    }
    g.string_inputs[input] = 1;
    g.values[g.inputs[input]].dtype = DType::i64;
    // Data moves typed string at import (value_info) are int64 codes now: shape inference types them.
    for (int v : r.values)
      if (g.values[v].producer >= 0 && g.values[v].dtype == DType::string) g.values[v].dtype = DType::undefined;
  }
}

std::vector<Tensor> encode_inputs(const Graph& g, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = inputs;
  for (size_t i = 0; i < g.string_inputs.size() && i < out.size(); ++i) {
    if (!g.string_inputs[i]) continue;
    const Tensor& t = inputs[i];
    const int64_t n = static_cast<int64_t>(g.input_strings.size());
    if (t.dtype() == DType::i64) {  // already codes (the Python front encodes with NumPy)
      for (int64_t j = 0; j < t.numel(); ++j)
        if (t.get_int(j) < -1 || t.get_int(j) >= n)
          throw Error("run", "input '" + printable(g.values[g.inputs[i]].name) + "': string code " + std::to_string(t.get_int(j)) +
                                 " is outside [-1, " + std::to_string(n) + ")");
      continue;
    }
    if (t.dtype() != DType::string)
      throw Error("run", "input '" + printable(g.values[g.inputs[i]].name) + "' expects string, got " + dtype_name(t.dtype()));
    Tensor c(DType::i64, t.shape());
    for (int64_t j = 0; j < t.numel(); ++j) {
      const std::string& s = t.strings[static_cast<size_t>(j)];
      auto it = std::lower_bound(g.input_strings.begin(), g.input_strings.end(), s);
      c.set_int(j, it != g.input_strings.end() && *it == s ? it - g.input_strings.begin() : -1);
    }
    out[i] = std::move(c);
  }
  return out;
}

void encode_output_forms(Graph& g) {
  if (!g.output_forms.empty()) return;  // already rewritten
  // Value id -> its string table (label codes), or the ZipMap form its value stands for.
  std::map<int, std::shared_ptr<const std::vector<std::string>>> codes;
  std::map<int, Form> zipmaps;
  for (Node& n : g.nodes) {
    // A node reading label codes: a data move passes them on, anything else is refused.
    std::shared_ptr<const std::vector<std::string>> table;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int v = n.inputs[i];
      if (zipmaps.count(v))
        throw Unsupported("graph", n.label() + " reads '" + printable(g.values[v].name) +
                                       "', a ZipMap's seq(map): maps are supported only as graph outputs");
      auto it = codes.find(v);
      if (it == codes.end()) continue;
      if (!moves_input(n, i, false) || (table && table != it->second))
        throw Unsupported("graph", n.label() + " reads '" + printable(g.values[v].name) +
                                       "', string labels: strings are supported only as a classifier's labels passed to the graph's outputs");
      table = it->second;
    }
    if (table) {
      if (n.op_type == "Concat")  // every input must carry the same table
        for (int v : n.inputs)
          if (v >= 0 && !codes.count(v))
            throw Unsupported("graph", n.label() + " concatenates string labels with '" + printable(g.values[v].name) + "'");
      if (!n.outputs.empty() && n.outputs[0] >= 0) {
        codes[n.outputs[0]] = table;
        g.values[n.outputs[0]].dtype = DType::undefined;  // int64 codes: shape inference types them
      }
      continue;
    }
    if (const char* attr = int_label_attr(n); attr && n.has_attr("classlabels_strings")) {
      auto labels = std::make_shared<const std::vector<std::string>>(n.attr_strings("classlabels_strings"));
      if (n.has_attr(attr)) throw Error("onnx", n.label() + ": both classlabels_strings and " + attr + " are set");
      std::vector<int64_t> ids(labels->size());
      for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i);
      n.attrs.erase("classlabels_strings");
      n.attrs[attr] = ids;
      if (!n.outputs.empty() && n.outputs[0] >= 0) {
        codes[n.outputs[0]] = labels;
        g.values[n.outputs[0]].dtype = DType::i64;  // the declared string type is the form's
      }
      continue;
    }
    if (n.op_type == "ZipMap" && n.domain == "ai.onnx.ml") {
      Form f;
      f.kind = Form::Kind::zipmap;
      const bool s = n.has_attr("classlabels_strings"), i = n.has_attr("classlabels_int64s");
      if (s == i) throw Error("onnx", n.label() + ": exactly one of classlabels_strings and classlabels_int64s must be set");
      f.string_keys = s;
      if (s) f.strings = n.attr_strings("classlabels_strings");
      else f.int_keys = n.attr_ints("classlabels_int64s");
      // Not a graph output: a node reading it is refused below; an unread one (a classifier's map
      // pruned from the outputs) is dead code, dropped like any other.
      if (n.outputs.size() != 1 || n.outputs[0] < 0)
        throw Unsupported("graph", n.label() + ": its seq(map) output must be a graph output (maps are supported only there)");
      zipmaps[n.outputs[0]] = f;
      n.op_type = "Identity";  // the float tensor it reads is what the maps hold
      n.domain.clear();
      n.attrs.clear();
      n.opset = g.opset;
      n.check_types = false;
      g.values[n.outputs[0]].dtype = DType::undefined;
    }
  }
  if (codes.empty() && zipmaps.empty()) return;
  g.output_forms.assign(g.outputs.size(), Form{});
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const int v = g.outputs[i];
    if (auto z = zipmaps.find(v); z != zipmaps.end()) {
      g.output_forms[i] = z->second;
    } else if (auto c = codes.find(v); c != codes.end()) {
      g.output_forms[i].kind = Form::Kind::labels;
      g.output_forms[i].strings = *c->second;
    }
  }
  // The declared string dtype of a label output is now the form's; its tensor is int64.
  for (auto& [v, dt] : g.declared_output_dtypes)
    if (codes.count(v) && dt == DType::string) dt = DType::i64;
}

void check_output_forms(const Graph& g) {
  for (size_t i = 0; i < g.output_forms.size() && i < g.outputs.size(); ++i) {
    const Form& f = g.output_forms[i];
    if (f.kind != Form::Kind::zipmap) continue;
    const Value& v = g.values[g.outputs[i]];
    const size_t keys = f.string_keys ? f.strings.size() : f.int_keys.size();
    if (v.dtype != DType::f32)
      throw Error("shape", "graph output '" + printable(v.name) + "' (ZipMap): its input must be float32, got " + dtype_name(v.dtype));
    if (v.shape.empty() || v.shape.size() > 2 || v.shape.back() != static_cast<int64_t>(keys))
      throw Error("shape", "graph output '" + printable(v.name) + "' (ZipMap): its input must be [N, " + std::to_string(keys) +
                               "] or [" + std::to_string(keys) + "] for its " + std::to_string(keys) + " keys, got " + shape_str(v.shape));
  }
}

void present_outputs(const Graph& g, std::vector<Tensor>& outs) {
  for (size_t i = 0; i < g.output_forms.size() && i < outs.size(); ++i) {
    const Form& f = g.output_forms[i];
    if (f.kind == Form::Kind::zipmap && outs[i].rank() == 1) outs[i].reshape({1, outs[i].numel()});  // one map: [1, C]
    if (f.kind != Form::Kind::labels || outs[i].dtype() == DType::string) continue;
    const Tensor& c = outs[i];
    Tensor s(DType::string, c.shape());
    for (int64_t j = 0; j < c.numel(); ++j) {
      const int64_t k = c.get_int(j);
      if (k < 0 || k >= static_cast<int64_t>(f.strings.size()))
        throw Error("run", "output " + std::to_string(i) + ": label code " + std::to_string(k) + " is outside its " +
                               std::to_string(f.strings.size()) + " string labels");
      s.strings[static_cast<size_t>(j)] = f.strings[static_cast<size_t>(k)];
    }
    outs[i] = std::move(s);
  }
}

std::string output_form_type(const Graph& g, size_t i) {
  if (i >= g.output_forms.size()) return "";
  const Form& f = g.output_forms[i];
  if (f.kind == Form::Kind::labels) return "string";
  if (f.kind == Form::Kind::zipmap) return f.string_keys ? "seq(map(string, float))" : "seq(map(int64, float))";
  return "";
}

}  // namespace fusor
