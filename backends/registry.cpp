#include <algorithm>
#include <map>
#include <mutex>

#include "backends/backend.h"
#include "backends/cpu/cpu_backends.h"

namespace fusor {

#ifdef FUSOR_HAVE_VULKAN
std::unique_ptr<Backend> make_vulkan_backend();
#endif
#ifdef FUSOR_HAVE_CUDA
std::unique_ptr<Backend> make_cuda_backend();
#endif

void check_host_device_index(const std::string& backend, int device) {
  if (device != 0)
    throw Error(backend, "device index " + std::to_string(device) + " out of range (1 device: the host)");
}

void check_run_inputs(const Graph& g, const std::vector<Tensor>& inputs) {
  if (inputs.size() != g.inputs.size())
    throw Error("run", "expected " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.values[g.inputs[i]];
    if (inputs[i].shape() != v.shape || inputs[i].dtype() != v.dtype)
      throw Error("run", "input '" + printable(v.name) + "' expects " + dtype_name(v.dtype) + " " + shape_str(v.shape) + ", got " +
                             dtype_name(inputs[i].dtype()) + " " + shape_str_short(inputs[i].shape()));
  }
}

std::vector<std::string> backend_names() {
  std::vector<std::string> n{"ref", "cpu"};
#ifdef FUSOR_HAVE_VULKAN
  n.push_back("vulkan");
#endif
#ifdef FUSOR_HAVE_CUDA
  n.push_back("cuda");
#endif
  return n;
}

namespace {
std::mutex registered_mu;
std::map<std::string, std::function<std::unique_ptr<Backend>()>>& registered() {
  static std::map<std::string, std::function<std::unique_ptr<Backend>()>> m;
  return m;
}
}  // namespace

void register_backend(const std::string& name, std::function<std::unique_ptr<Backend>()> factory) {
  auto names = backend_names();
  if (std::find(names.begin(), names.end(), name) != names.end() || name == "vulkan" || name == "cuda")
    throw Error("backend", "cannot register '" + name + "': a built-in backend has that name");
  std::lock_guard<std::mutex> lock(registered_mu);
  if (factory) registered()[name] = std::move(factory);
  else registered().erase(name);
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(registered_mu);
    auto it = registered().find(name);
    if (it != registered().end()) return it->second();
  }
  if (name == "ref") return make_ref_backend();
  if (name == "cpu") return make_cpu_backend();
#ifdef FUSOR_HAVE_VULKAN
  if (name == "vulkan") return make_vulkan_backend();
#endif
#ifdef FUSOR_HAVE_CUDA
  if (name == "cuda") return make_cuda_backend();
#endif
  std::string all;
  for (auto& b : backend_names()) all += (all.empty() ? "" : ", ") + b;
  throw Error("backend", "unknown or not built-in backend '" + printable(name) + "' (available: " + all + ")");
}

}  // namespace fusor
