// fusor._fusor: the native half of the Python package (python/fusor/__init__.py is the
// onnxruntime-style front). A _Session wraps one model on one backend; host arrays go through
// fusor::Session (compiled per input signature, as the CLI), CUDA device arrays through
// CudaExecutable::run_device on the caller's own memory. The GIL is released while fusor
// loads, compiles and runs; fusor::Error / Unsupported become fusor.Error / fusor.Unsupported
// with the same one-line message.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>

#include <unistd.h>

#include "frontend/onnx_import.h"
#include "ir/output_forms.h"
#include "ir/passes.h"
#include "runtime/session.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;
using namespace fusor;

void bind_tools(nb::module_& m);  // bindings_tools.cpp

namespace {

constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3;

DType dtype_from_dlpack(nb::dlpack::dtype d, const std::string& what) {
  using C = nb::dlpack::dtype_code;
  if (d.lanes == 1) {
    switch (static_cast<C>(d.code)) {
      case C::Float:
        if (d.bits == 32) return DType::f32;
        if (d.bits == 64) return DType::f64;
        if (d.bits == 16) return DType::f16;
        break;
      case C::Bfloat:
        if (d.bits == 16) return DType::bf16;
        break;
      case C::Int:
        if (d.bits == 8) return DType::i8;
        if (d.bits == 16) return DType::i16;
        if (d.bits == 32) return DType::i32;
        if (d.bits == 64) return DType::i64;
        break;
      case C::UInt:
        if (d.bits == 8) return DType::u8;
        if (d.bits == 16) return DType::u16;
        if (d.bits == 32) return DType::u32;
        if (d.bits == 64) return DType::u64;
        break;
      case C::Bool:
        if (d.bits == 8) return DType::boolean;
        break;
      default:
        break;
    }
  }
  throw Unsupported("python", what + ": DLPack dtype (code " + std::to_string(d.code) + ", " + std::to_string(d.bits) +
                                  " bits, " + std::to_string(d.lanes) + " lanes) has no fusor dtype");
}

nb::dlpack::dtype dlpack_from_dtype(DType t, const std::string& what) {
  using C = nb::dlpack::dtype_code;
  auto mk = [](C c, int bits) {
    nb::dlpack::dtype d;
    d.code = static_cast<uint8_t>(c);
    d.bits = static_cast<uint8_t>(bits);
    d.lanes = 1;
    return d;
  };
  switch (t) {
    case DType::f32: return mk(C::Float, 32);
    case DType::f64: return mk(C::Float, 64);
    case DType::f16: return mk(C::Float, 16);
    case DType::bf16: return mk(C::Bfloat, 16);
    case DType::i8: return mk(C::Int, 8);
    case DType::i16: return mk(C::Int, 16);
    case DType::i32: return mk(C::Int, 32);
    case DType::i64: return mk(C::Int, 64);
    case DType::u8: return mk(C::UInt, 8);
    case DType::u16: return mk(C::UInt, 16);
    case DType::u32: return mk(C::UInt, 32);
    case DType::u64: return mk(C::UInt, 64);
    case DType::boolean: return mk(C::Bool, 8);
    default: throw Unsupported("python", what + ": dtype " + dtype_name(t) + " cannot be returned as an array");
  }
}

// Inputs are read only (nb::ro): read-only arrays (np.broadcast_to, frombuffer, setflags(write=
// False), NumPy views of an unversioned DLPack capsule) were refused as "incompatible function
// arguments".
using InArray = nb::ndarray<nb::ro>;
// Caller outputs (outputs=), imported from the DLPack capsules the Python front took; nullopt
// where the caller passed none.
using OutArrays = std::vector<std::optional<nb::ndarray<>>>;

nb::list shape_list(const Shape& s) {  // None for a dim the model leaves open
  nb::list shape;
  for (int64_t d : s) {
    if (d < 0) shape.append(nb::none());
    else shape.append(d);
  }
  return shape;
}

// A value's shape for get_inputs / get_outputs: None when the model does not declare it (not
// even its rank), never [] (which would claim a scalar).
// (shape_known means every dim is fixed; an open rank is an empty shape that is not known.)
nb::object declared_shape(const Value& v) {
  return v.shape_known || !v.shape.empty() ? nb::object(shape_list(v.shape)) : nb::none();
}

template <class A> Shape shape_of(const A& a) {
  Shape s(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) s[i] = static_cast<int64_t>(a.shape(i));
  return s;
}

// fusor buffers are dense row-major; the Python front makes NumPy arrays contiguous, so a
// strided array here is a device tensor (torch .t()) the caller must make contiguous.
template <class A> void check_contiguous(const A& a, const std::string& what) {
  for (size_t i = 0; i < a.ndim(); ++i)
    if (a.shape(i) == 0) return;  // no elements: any strides (NumPy leaves them arbitrary) read nothing
  int64_t expect = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expect)
      throw Error("python", what + " is not C-contiguous (call .contiguous() / np.ascontiguousarray first)");
    expect *= static_cast<int64_t>(a.shape(i));
  }
}

// bf16: the array is an ml_dtypes.bfloat16 array's uint16 view (bfloat16_view): the bits are
// taken as bfloat16.
Tensor host_tensor(const InArray& a, const std::string& what, bool bf16 = false) {
  check_contiguous(a, what);
  const DType dt = dtype_from_dlpack(a.dtype(), what);
  Tensor t(bf16 && dt == DType::u16 ? DType::bf16 : dt, shape_of(a));
  if (t.nbytes()) std::memcpy(t.raw(), a.data(), t.nbytes());
  return t;
}

// NumPy's DLPack has no bfloat16: an ml_dtypes.bfloat16 NumPy array (what bfloat16 outputs
// come back as) is handed over as its uint16 view, *bf16 set; anything else as it is.
nb::object bfloat16_view(const nb::object& o, bool* bf16) {
  nb::object np = nb::module_::import_("numpy");
  *bf16 = PyObject_IsInstance(o.ptr(), np.attr("ndarray").ptr()) == 1 && nb::cast<std::string>(o.attr("dtype").attr("name")) == "bfloat16";
  return *bf16 ? o.attr("view")(np.attr("uint16")) : o;
}

}  // namespace

// A NumPy array that owns the tensor's bytes (no copy: the capsule keeps the tensor alive).
// Also used by bindings_tools.cpp (read_tensor).
nb::object to_numpy(Tensor&& t, const std::string& what) {
  if (t.dtype() == DType::string) {  // a classifier's string labels: an object array of str, as onnxruntime returns
    nb::list items;
    for (const std::string& s : t.strings) items.append(nb::str(s.data(), s.size()));
    nb::object np = nb::module_::import_("numpy");
    nb::list shape;
    for (int64_t d : t.shape()) shape.append(d);
    return np.attr("array")(items, "dtype"_a = np.attr("object_")).attr("reshape")(nb::tuple(shape));
  }
  // NumPy 2 holds at most 64 dims (kMaxRank keeps fusor's shapes there; checked again here since
  // nanobind aborts the process far past NumPy's limit); NumPy 1 holds 32, checked below.
  const size_t rank = t.shape().size();  // t is moved from below
  const auto too_many_dims = [&] {
    return Error("python", what + ": rank " + std::to_string(rank) + " is more than this NumPy's arrays hold");
  };
  if (rank > kMaxRank) throw too_many_dims();
  // NumPy has no bfloat16: the bits as uint16, viewed as ml_dtypes.bfloat16 (nanobind would
  // hand back an opaque object). Without ml_dtypes, one error saying what to install.
  const bool bf16 = t.dtype() == DType::bf16;
  nb::object ml_bf16;
  if (bf16) {
    try {
      ml_bf16 = nb::module_::import_("ml_dtypes").attr("bfloat16");
    } catch (const nb::python_error&) {
      throw Unsupported("python", what + ": a bfloat16 array needs the ml_dtypes package (pip install ml_dtypes); "
                                         "or run with output_device=True for a DLPack tensor");
    }
  }
  nb::dlpack::dtype dt = bf16 ? dlpack_from_dtype(DType::u16, what) : dlpack_from_dtype(t.dtype(), what);
  auto* held = new Tensor(std::move(t));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(held->shape().begin(), held->shape().end());
  // Non-const raw(): detaches bytes still shared with the plan (a constant output), so the
  // caller may write to the array.
  void* data = held->nbytes() ? static_cast<void*>(held->raw()) : nullptr;
  nb::ndarray<nb::numpy> arr(data, shape.size(), shape.data(), owner, nullptr, dt, kDLCPU, 0);
  nb::object out = arr.cast();
  // Past NumPy's own limit nanobind returns an opaque object instead of an array.
  if (PyObject_IsInstance(out.ptr(), nb::module_::import_("numpy").attr("ndarray").ptr()) != 1) throw too_many_dims();
  return bf16 ? out.attr("view")(ml_bf16) : out;
}

namespace {

// A ZipMap output ([N, C] float32 values) as onnxruntime returns it: a list of N dicts key -> float.
nb::list zipmap_list(const Tensor& v, const Graph::OutputForm& f) {
  nb::list maps;
  const int64_t c = v.rank() == 2 ? v.shape()[1] : v.numel(), n = c ? v.numel() / c : 0;
  for (int64_t r = 0; r < n; ++r) {
    nb::dict m;
    for (int64_t j = 0; j < c; ++j) {
      nb::float_ x(v.get(r * c + j));
      if (f.string_keys) m[nb::str(f.strings[j].data(), f.strings[j].size())] = x;
      else m[nb::int_(f.int_keys[j])] = x;
    }
    maps.append(m);
  }
  return maps;
}

class PySession {
 public:
  PySession(Graph g, std::string backend, int device, bool fusion, bool replay, size_t max_executables)
      : model_(std::move(g)), backend_(backend) {
    opts_.device = device;
    opts_.fusion = fusion;
    opts_.replay = replay;
    host_ = std::make_unique<Session>(model_, backend_, opts_);
    host_->set_max_executables(max_executables);
    max_executables_ = max_executables;
  }

  ~PySession() {
    if (forked_mid_run()) abandon();
  }

  // The run lock, checked for fork() first (callers hold the GIL, so child threads cannot race
  // here). A child forked while another thread was inside run() inherits the locks of a thread
  // it does not have: it would wait forever. The half-run session is abandoned and rebuilt, as
  // onnxruntime's child keeps running.
  std::mutex& run_lock() {
    if (getpid() == pid_) return *mu_;
    if (forked_mid_run()) {
      auto fresh = std::make_unique<Session>(model_, backend_, opts_);  // may throw: then asked again next run
      fresh->set_max_executables(max_executables_);  // not asked of the old one: it may hold its lock
      abandon();
      mu_ = std::make_unique<std::mutex>();
      host_ = std::move(fresh);
    }
    pid_ = getpid();
    return *mu_;
  }

  // (name, shape or None, dtype) per graph input or output. infer (outputs): an output whose
  // shape the model leaves open, in a model whose inputs all have fixed shapes, gets the shape
  // fusor's shape inference gives it (as onnxruntime's get_outputs); where that fails (a
  // data-dependent shape) it stays open.
  nb::list io_info(bool outputs, bool infer = false) const {
    const Graph* shapes = &model_;
    std::optional<Graph> inferred;
    bool open = false;
    for (int id : model_.outputs) {
      const Value& v = model_.values[id];
      open = open || !v.shape_known || std::any_of(v.shape.begin(), v.shape.end(), [](int64_t d) { return d < 0; });
    }
    if (outputs && infer && open) {
      std::map<std::string, Shape> in;
      bool fixed = true;
      for (int id : model_.inputs) {
        const Value& v = model_.values[id];
        fixed = fixed && v.shape_known && std::all_of(v.shape.begin(), v.shape.end(), [](int64_t d) { return d >= 0; });
        in[v.name] = v.shape;
      }
      if (fixed) {
        nb::gil_scoped_release release;
        try {
          Graph g = model_;
          make_static(g, in);
          if (g.outputs.size() == model_.outputs.size()) inferred = std::move(g);
        } catch (const std::exception&) {
          // data-dependent or refused: the shape stays as declared (a run reports the error)
        }
      }
      if (inferred) shapes = &*inferred;
    }
    nb::list l;
    const std::vector<int>& ids = outputs ? model_.outputs : model_.inputs;
    for (size_t k = 0; k < ids.size(); ++k) {
      const Value& v = model_.values[ids[k]];
      const Value& s = outputs && shapes != &model_ ? shapes->values[shapes->outputs[k]] : v;
      DType dt = v.dtype != DType::undefined ? v.dtype : s.dtype;
      if (!outputs && k < model_.string_inputs.size() && model_.string_inputs[k]) dt = DType::string;  // fed strings, run as codes
      const std::string form = outputs ? output_form_type(model_, k) : "";  // string labels, ZipMap's maps
      if (form.rfind("seq(", 0) == 0) l.append(nb::make_tuple(v.name, nb::none(), form));
      else l.append(nb::make_tuple(v.name, declared_shape(s), form.empty() ? std::string(dtype_name(dt)) : form));
    }
    return l;
  }

  // The string inputs' table: a string's code is its index (ir/output_forms.h encode_inputs).
  const std::vector<std::string>& input_strings() const { return model_.input_strings; }
  // Per input: a string input the model computes on (text ops), fed as strings, not codes.
  std::vector<bool> kept_string_inputs() const {
    std::vector<bool> k;
    for (int v : model_.inputs) k.push_back(model_.values[v].dtype == DType::string);
    return k;
  }

  // Overridable initializers (Graph::overridable): name, declared shape (the default's when
  // none is declared), dtype.
  nb::list overridable_info() const {
    nb::list l;
    for (const auto& o : model_.overridable) {
      const Value& v = model_.values[o.value];
      l.append(nb::make_tuple(v.name, shape_list(o.shape_known ? o.shape : v.shape), std::string(dtype_name(v.dtype))));
    }
    return l;
  }

  const std::string& backend() const { return backend_; }
  size_t cached_executables() const { return host_->cached_executables(); }

  // inputs: one array-like per graph input (graph order); outputs: per graph output None or a
  // DLPack capsule of a caller device array to write into (cuda only). A caller output's entry
  // in the result is None: the Python front puts the caller's object there.
  // overrides: per overridable initializer (in order, trailing ones may be left out) None to keep
  // it, or a host array to feed instead.
  // pick: only the outputs whose indices are in `wanted` are returned, the others are None and
  // never converted (an int4 output nobody asked for must not fail the run); else all.
  nb::list run(const std::vector<nb::object>& input_objects, bool output_device, const std::vector<nb::object>& outputs,
               const std::vector<nb::object>& overrides, const std::vector<int64_t>& wanted, bool pick) {
    std::vector<char> want(model_.outputs.size(), pick ? 0 : 1);
    for (int64_t k : wanted) {
      if (k < 0 || k >= static_cast<int64_t>(want.size()))
        throw Error("python", "output index " + std::to_string(k) + " is out of range (the model has " +
                                  std::to_string(want.size()) + " outputs)");
      want[static_cast<size_t>(k)] = 1;
    }
    // Cast here rather than in the signature: an array nanobind cannot take (a dtype DLPack
    // lacks) is one fusor.Error naming the input, not a TypeError listing the signature.
    std::vector<InArray> inputs;
    std::vector<char> bf16(input_objects.size(), 0);
    // A string input the model computes on (text ops: not coded) comes as (list of str, shape).
    std::vector<std::optional<Tensor>> strings(input_objects.size());
    for (size_t i = 0; i < input_objects.size(); ++i) {
      if (nb::isinstance<nb::tuple>(input_objects[i])) {
        // nanobind's casts throw std::bad_cast / cast_error: one fusor.Error naming the input.
        const auto cast_or = [&](auto f, const auto& what) {  // what: the message, or a function making it
          try {
            return f();
          } catch (const Error&) {
            throw;
          } catch (const std::exception&) {
            if constexpr (std::is_invocable_v<decltype(what)>) throw Error("python", "input '" + input_name(i) + "': " + what());
            else throw Error("python", "input '" + input_name(i) + "': " + std::string(what));
          }
        };
        const nb::tuple t = cast_or([&] { return nb::cast<nb::tuple>(input_objects[i]); }, "expected (list of str, shape)");
        if (t.size() != 2) throw Error("python", "input '" + input_name(i) + "': expected (list of str, shape)");
        Shape shape;
        cast_or([&] {
          for (nb::handle d : nb::cast<nb::tuple>(t[1])) shape.push_back(nb::cast<int64_t>(d));
          return 0;
        }, "its shape must be a tuple of ints");
        const nb::list items = cast_or([&] { return nb::cast<nb::list>(t[0]); }, "its strings must come as a list of str");
        size_t count = 1;  // the shape's element count, checked against the list before allocating
        for (int64_t d : shape) {
          if (d < 0) throw Error("python", "input '" + input_name(i) + "': negative dimension in shape " + shape_str(shape));
          const size_t ud = static_cast<size_t>(d);  // saturates just past the list's length
          count = ud == 0 ? 0 : count > (items.size() + 1) / ud ? items.size() + 1 : count * ud;
        }
        if (count > items.size()) throw Error("python", "input '" + input_name(i) + "': fewer strings than its shape holds");
        Tensor st(DType::string, shape);
        size_t j = 0;
        for (nb::handle v : items) {
          if (j >= st.strings.size()) throw Error("python", "input '" + input_name(i) + "': more strings than its shape holds");
          st.strings[j] = cast_or([&] { return nb::cast<std::string>(v); }, [&] {
            return "element " + std::to_string(j) + " is not a str that encodes as UTF-8 (a lone surrogate, or not a str)";
          });
          ++j;
        }
        if (j != st.strings.size()) throw Error("python", "input '" + input_name(i) + "': fewer strings than its shape holds");
        strings[i] = std::move(st);
        inputs.emplace_back();
        continue;
      }
      try {
        bool b = false;
        inputs.push_back(nb::cast<InArray>(bfloat16_view(input_objects[i], &b), false));
        bf16[i] = b;
      } catch (const nb::cast_error&) {
        throw Error(
            "python",
            "input '" + input_name(i) + "': " + nb::type_name(input_objects[i].type()).c_str() +
                " cannot be handed over as an array (DLPack; bool, integer, float16/32/64 and bfloat16 arrays can)");
      }
    }
    if (overrides.size() > model_.overridable.size())
      throw Error("python", "expected at most " + std::to_string(model_.overridable.size()) + " overridable initializers, got " +
                                std::to_string(overrides.size()));
    std::vector<Tensor> fed_overrides;
    for (size_t j = 0; j < overrides.size(); ++j) {
      if (overrides[j].is_none()) {
        fed_overrides.emplace_back();
        continue;
      }
      const std::string what = "input '" + model_.values[model_.overridable[j].value].name + "'";
      InArray a;
      bool b = false;
      try {
        a = nb::cast<InArray>(bfloat16_view(overrides[j], &b), false);
      } catch (const nb::cast_error&) {
        throw Error("python", what + ": expected an array");
      }
      if (a.device_type() != kDLCPU && a.device_type() != kDLCUDAHost)
        throw Error("python", what + " overrides an initializer: it takes a host array (NumPy), not device memory");
      fed_overrides.push_back(host_tensor(a, what, b));
    }
    // Imported here, before anything else, as inputs are: importing marks each capsule used
    // (in every build), so a capsule handed over again is refused, never read after free.
    OutArrays outs(outputs.size());
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].is_none()) continue;
      if (!nb::isinstance<nb::capsule>(outputs[k]))
        throw Error("python", "output '" + output_name(k) + "': expected a DLPack capsule from the Python front");
      try {
        outs[k] = nb::cast<nb::ndarray<>>(outputs[k], false);
      } catch (const nb::cast_error&) {
        throw Error("python", "output '" + output_name(k) + "': not a usable DLPack capsule");
      }
    }
    bool device = output_device;
    for (auto& o : outs) device = device || o.has_value();
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!strings[i] && inputs[i].device_type() != kDLCPU && inputs[i].device_type() != kDLCUDAHost) device = true;
    if (device) {
      for (const auto& t : strings)
        if (t) throw Error("python", "a model with string inputs runs from host arrays (no device array, output_device or outputs=)");
      for (const Tensor& t : fed_overrides)
        if (t.defined())
          throw Error("python", "feeding an overridable initializer needs host inputs and outputs (device arrays, output_device "
                                "and outputs= do not take it yet)");
      return run_device(inputs, output_device, outs, want);
    }

    std::vector<Tensor> in;
    for (size_t i = 0; i < inputs.size(); ++i)
      in.push_back(strings[i] ? std::move(*strings[i]) : host_tensor(inputs[i], "input '" + input_name(i) + "'", bf16[i]));
    if (in.size() == model_.inputs.size())  // else Session::run names the count
      for (Tensor& t : fed_overrides) in.push_back(std::move(t));
    std::vector<Tensor> out;
    {
      std::mutex& mu = run_lock();
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu);
      out = host_->run(in);
    }
    nb::list res;
    for (size_t k = 0; k < out.size(); ++k) {
      if (k < want.size() && !want[k])
        res.append(nb::none());
      else if (k < model_.output_forms.size() && model_.output_forms[k].kind == Graph::OutputForm::Kind::zipmap)
        res.append(zipmap_list(out[k], model_.output_forms[k]));
      else
        res.append(to_numpy(std::move(out[k]), "output '" + output_name(k) + "'"));
    }
    return res;
  }

 private:
  // In a process forked from the session's, whether a run was in progress at the fork.
  bool forked_mid_run() {
    if (getpid() == pid_) return false;
    if (!mu_->try_lock()) return true;
    mu_->unlock();
    return false;
  }
  // Drops the session without destroying it: its destructor would wait on the locks the missing
  // thread holds (the memory is the child's copy; the parent still owns the real objects).
  void abandon() {
    (void)host_.release();
    (void)mu_.release();
#ifdef FUSOR_HAVE_CUDA
    for (auto& kv : device_cache_) new std::shared_ptr<Executable>(std::move(kv.second.first));
    device_cache_.clear();
#endif
  }

  std::string input_name(size_t i) const {
    return i < model_.inputs.size() ? model_.values[model_.inputs[i]].name : "#" + std::to_string(i);
  }
  std::string output_name(size_t k) const {
    return k < model_.outputs.size() ? model_.values[model_.outputs[k]].name : "#" + std::to_string(k);
  }

  nb::list run_device(const std::vector<InArray>& inputs, bool output_device, const OutArrays& outputs,
                      const std::vector<char>& want);

  Graph model_;
  std::string backend_;
  CompileOptions opts_;
  std::unique_ptr<Session> host_;
  // One run at a time per session (fusor::Session is not thread-safe); take it with run_lock().
  std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
  pid_t pid_ = getpid();
  size_t max_executables_ = Session::kDefaultMaxExecutables;
#ifdef FUSOR_HAVE_CUDA
  // Per input signature: the executable and its last use (LRU), at most host_->max_executables().
  std::map<std::string, std::pair<std::shared_ptr<Executable>, uint64_t>> device_cache_;
  uint64_t device_tick_ = 0;
#endif
};

#ifdef FUSOR_HAVE_CUDA
// Device arrays on cuda: inputs and outputs are the caller's memory, bound with run_device (no
// host copy; the executable re-points its graph's kernel nodes). Host inputs mixed in are
// uploaded to scratch device buffers; outputs the caller did not pass are allocated here and
// returned as device arrays (output_device) or copied to NumPy.
nb::list PySession::run_device(const std::vector<InArray>& inputs, bool output_device, const OutArrays& outputs,
                               const std::vector<char>& want) {
  if (backend_ != "cuda")
    throw Error("python", "device arrays (and output_device / outputs=) need backend 'cuda'; backend '" + backend_ +
                              "' takes host arrays (NumPy)");
  for (size_t k = 0; k < model_.output_forms.size(); ++k)
    if (model_.output_forms[k].kind != Graph::OutputForm::Kind::tensor && (k >= want.size() || want[k]))
      throw Unsupported("python", "output '" + output_name(k) + "' is " + output_form_type(model_, k) +
                                      ": a device array cannot hold it; run with host arrays (NumPy)");
  if (inputs.size() != model_.inputs.size())
    throw Error("run", "model has " + std::to_string(model_.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  if (!outputs.empty() && outputs.size() != model_.outputs.size())
    throw Error("python", "outputs: expected one entry (array or None) per model output");
  std::vector<Tensor> shapes;  // host stand-ins: dtype and shape (values only for host inputs)
  std::vector<char> on_host(inputs.size(), 0);
  std::string key;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string what = "input '" + input_name(i) + "'";
    const auto& a = inputs[i];
    if (a.device_type() == kDLCUDA) {
      if (a.device_id() != opts_.device)
        throw Error("python", what + " is on cuda:" + std::to_string(a.device_id()) + ", the session on cuda:" +
                                  std::to_string(opts_.device));
      check_contiguous(a, what);
      shapes.emplace_back(dtype_from_dlpack(a.dtype(), what), shape_of(a));
    } else if (a.device_type() == kDLCPU || a.device_type() == kDLCUDAHost) {
      shapes.push_back(host_tensor(a, what));
      on_host[i] = 1;
    } else {
      throw Error("python", what + " is on DLPack device type " + std::to_string(a.device_type()) +
                                ": the cuda backend takes host arrays or cuda device arrays");
    }
    key += std::string(dtype_name(shapes.back().dtype())) + shape_str(shapes.back().shape()) + ";";
  }
  std::vector<uint64_t> in_ptrs(inputs.size()), out_ptrs;
  std::vector<uint64_t> scratch;  // freed before returning
  std::shared_ptr<Executable> exe;
  CudaExecutable* cu = nullptr;
  std::vector<Tensor> host_out;
  {
    std::mutex& mu = run_lock();
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu);
    auto it = device_cache_.find(key);
    if (it == device_cache_.end()) {
      SpecializeInfo info;
      Graph sg = specialize(model_, shapes, &info);
      for (size_t i = 0; i < inputs.size(); ++i)
        if (sg.values[sg.inputs[i]].constant)
          throw Unsupported("python", "the model's shapes depend on the values of input '" + input_name(i) +
                                          "': run it with host (NumPy) inputs");
      // A value computed from the inputs (an If's condition, a NonZero's count) would come from
      // the stand-ins here, not the caller's device data.
      if (info.computed > 0)
        throw Unsupported("python", "the model's shapes depend on values computed from its inputs: run it with host (NumPy) inputs");
      // Bounded like the host Session's cache: the least recently used signature goes (an
      // output array still holding it keeps it alive through its capsule).
      while (device_cache_.size() >= host_->max_executables()) {
        auto oldest = device_cache_.begin();
        for (auto c = device_cache_.begin(); c != device_cache_.end(); ++c)
          if (c->second.second < oldest->second.second) oldest = c;
        device_cache_.erase(oldest);
      }
      it = device_cache_
               .emplace(key, std::make_pair(std::shared_ptr<Executable>(make_backend("cuda")->compile(sg, opts_)), 0))
               .first;
    }
    it->second.second = ++device_tick_;
    exe = it->second.first;
    cu = dynamic_cast<CudaExecutable*>(exe.get());
    if (!cu) throw Error("python", "the cuda backend returned an executable without device buffers");
    try {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (on_host[i]) {
          in_ptrs[i] = cu->device_alloc(shapes[i].nbytes());
          scratch.push_back(in_ptrs[i]);
          cu->copy_to_device(in_ptrs[i], shapes[i]);
        } else {
          in_ptrs[i] = reinterpret_cast<uint64_t>(inputs[i].data());  // read only by the kernels
        }
      }
      const auto& od = cu->output_descs();
      out_ptrs.assign(od.size(), 0);
      for (size_t k = 0; k < od.size(); ++k) {
        if (k < outputs.size() && outputs[k]) continue;  // filled below, with the GIL
        out_ptrs[k] = cu->device_alloc(static_cast<size_t>(od[k].nbytes));
        if (!output_device) scratch.push_back(out_ptrs[k]);
      }
    } catch (...) {
      for (uint64_t p : scratch) cu->device_free(p);
      throw;
    }
  }
  // Caller-owned outputs.
  const auto& od = cu->output_descs();
  auto free_all = [&] {
    for (uint64_t p : scratch) cu->device_free(p);
    if (output_device)
      for (size_t k = 0; k < out_ptrs.size(); ++k)
        if (out_ptrs[k] && (k >= outputs.size() || !outputs[k])) cu->device_free(out_ptrs[k]);
  };
  try {
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (!outputs[k]) continue;
      const std::string what = "output '" + od[k].name + "'";
      const auto& a = *outputs[k];
      if (a.device_type() != kDLCUDA || a.device_id() != opts_.device)
        throw Error("python", what + ": outputs= takes arrays on cuda:" + std::to_string(opts_.device));
      check_contiguous(a, what);
      if (dtype_from_dlpack(a.dtype(), what) != od[k].dtype || shape_of(a) != od[k].shape)
        throw Error("python", what + " expects " + dtype_name(od[k].dtype) + " " + shape_str(od[k].shape) + ", got " +
                                  dtype_name(dtype_from_dlpack(a.dtype(), what)) + " " + shape_str(shape_of(a)));
      out_ptrs[k] = reinterpret_cast<uint64_t>(a.data());
    }
    std::mutex& mu = run_lock();
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu);
    cu->run_device(in_ptrs, out_ptrs);
    if (!output_device)
      for (size_t k = 0; k < od.size(); ++k)
        host_out.push_back(k < outputs.size() && outputs[k] ? Tensor() : cu->copy_from_device(out_ptrs[k], od[k].dtype, od[k].shape));
  } catch (...) {
    free_all();
    throw;
  }
  for (uint64_t p : scratch) cu->device_free(p);
  nb::list res;
  for (size_t k = 0; k < od.size(); ++k) {
    if (k < outputs.size() && outputs[k]) {
      res.append(nb::none());  // the result is in the caller's own tensor (the front returns it)
    } else if (k < want.size() && !want[k]) {
      if (output_device) cu->device_free(out_ptrs[k]);  // not asked for: nothing will own it
      res.append(nb::none());
    } else if (!output_device) {
      res.append(to_numpy(std::move(host_out[k]), "output '" + od[k].name + "'"));
    } else {
      // A device array owning its allocation: the capsule frees it (and keeps the executable,
      // whose context it lives in, alive).
      struct Owned {
        std::shared_ptr<Executable> exe;
        uint64_t ptr;
      };
      auto* o = new Owned{exe, out_ptrs[k]};
      nb::capsule owner(o, [](void* p) noexcept {
        auto* ow = static_cast<Owned*>(p);
        try {
          dynamic_cast<CudaExecutable&>(*ow->exe).device_free(ow->ptr);
        } catch (...) {
        }
        delete ow;
      });
      std::vector<size_t> shape(od[k].shape.begin(), od[k].shape.end());
      nb::ndarray<> arr(reinterpret_cast<void*>(out_ptrs[k]), shape.size(), shape.data(), owner, nullptr,
                        dlpack_from_dtype(od[k].dtype, od[k].name), kDLCUDA, opts_.device);
      res.append(arr.cast());
    }
  }
  return res;
}
#else
nb::list PySession::run_device(const std::vector<InArray>&, bool, const OutArrays&, const std::vector<char>&) {
  throw Error("python", "device arrays (and output_device / outputs=) need the cuda backend, which this fusor was built without");
}
#endif

// source: the serialized model (bytes), or with is_path its path as os.fsencode bytes (any
// name Linux allows, not only UTF-8; the Python front refuses an embedded NUL).
Graph load_source(nb::handle source, bool is_path) {
  if (is_path) {
    nb::bytes b = nb::cast<nb::bytes>(source);
    std::string path(b.c_str(), b.size());
    nb::gil_scoped_release release;
    return load_model(path);
  }
  if (nb::isinstance<nb::bytes>(source)) {
    nb::bytes b = nb::borrow<nb::bytes>(source);
    std::string bytes(b.c_str(), b.size());
    nb::gil_scoped_release release;
    return load_onnx_from_bytes(bytes, "");
  }
  std::string path = nb::cast<std::string>(source);
  nb::gil_scoped_release release;
  return load_model(path);
}

}  // namespace

NB_MODULE(_fusor, m) {
  m.doc() = "fusor native module (use the fusor package)";
  m.attr("__version__") = FUSOR_VERSION;
  // Sessions still referenced at interpreter exit (a module-level session, a daemon thread's)
  // are not leaks of the binding: nanobind's exit report would print one warning per object.
  nb::set_leak_warnings(false);
  // Translators run most-recent first: Unsupported (a subclass of Error) is registered last.
  static nb::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static nb::exception<Unsupported> unsupported(m, "Unsupported", error);
  // Messages quote paths and model names, which need not be UTF-8 (a file name with byte 0xff):
  // nanobind's own translation decodes strictly and raised UnicodeDecodeError instead. This
  // translator, registered last, runs first; undecodable bytes become \xNN escapes.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    auto raise = [](PyObject* type, const char* what) {
      PyObject* msg = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
      if (!msg) return;  // MemoryError is already set
      PyErr_SetObject(type, msg);
      Py_DECREF(msg);
    };
    try {
      std::rethrow_exception(p);
    } catch (const Unsupported& e) {
      raise(unsupported.ptr(), e.what());
    } catch (const Error& e) {
      raise(error.ptr(), e.what());
    }
  });

  nb::class_<PySession>(m, "_Session")
      .def(
          "__init__",
          [](PySession* self, nb::handle source, const std::string& backend, int device, bool fusion, bool replay,
             bool is_path, size_t max_executables) {
            Graph g = load_source(source, is_path);
            {
              nb::gil_scoped_release release;
              // An unknown backend, one that sees no device here (cuda without a driver) or a
              // device index past the last fails here, not at the first run.
              const std::vector<DeviceInfo> devs = make_backend(backend)->devices();
              if (devs.empty())
                throw Error(backend, "no device on this machine (fusor.devices() lists what each backend sees)");
              if (device < 0 || static_cast<size_t>(device) >= devs.size())
                throw Error(backend, "device index " + std::to_string(device) + " out of range (" + std::to_string(devs.size()) +
                                         " device(s): " + devs[0].name + (devs.size() > 1 ? ", ..." : "") + ")");
            }
            new (self) PySession(std::move(g), backend, device, fusion, replay, max_executables);
          },
          nb::arg("source"), nb::arg("backend"), nb::arg("device") = 0, nb::arg("fusion") = true,
          nb::arg("replay") = true, nb::arg("is_path") = false,
          nb::arg("max_executables") = Session::kDefaultMaxExecutables)
      .def("inputs", [](const PySession& s) { return s.io_info(false); })
      .def(
          "outputs", [](const PySession& s, bool infer) { return s.io_info(true, infer); }, nb::arg("infer") = false)
      .def("cached_executables", [](const PySession& s) { return s.cached_executables(); })
      .def("input_strings", [](const PySession& s) { return s.input_strings(); })
      .def("kept_string_inputs", [](const PySession& s) { return s.kept_string_inputs(); })
      .def("overridable", [](const PySession& s) { return s.overridable_info(); })
      .def_prop_ro("backend", &PySession::backend)
      .def("run", &PySession::run, nb::arg("inputs"), nb::arg("output_device") = false,
           nb::arg("outputs") = std::vector<nb::object>{}, nb::arg("overrides") = std::vector<nb::object>{},
           nb::arg("wanted") = std::vector<int64_t>{}, nb::arg("pick") = false);

  bind_tools(m);
}
