// Instance, validation messenger, physical-device discovery, logical device, caches' home.
#include "backends/vulkan/vk_device.h"
#include "backends/vulkan/vk_coopmat.h"
#include "runtime/disk_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include "backends/vulkan/vulkan_backend.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_driver.h"
#endif

namespace fusor {

// ---- validation message counting (public hooks in vulkan_backend.h) -------------------------

namespace {
std::atomic<int> g_validation_count{0};
std::atomic<bool> g_validation_active{false};
std::mutex g_validation_mutex;
std::vector<std::string> g_validation_messages;  // first few, for test failure output
constexpr size_t kKeepMessages = 32;

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT, const VkDebugUtilsMessengerCallbackDataEXT* data,
                                              void*) {
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
  g_validation_count.fetch_add(1);
  std::lock_guard<std::mutex> lock(g_validation_mutex);
  if (g_validation_messages.size() < kKeepMessages)
    g_validation_messages.push_back(std::string(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error: " : "warning: ") +
                                    (data && data->pMessage ? data->pMessage : "(no message)"));
  return VK_FALSE;  // never abort the call: the count is what tests assert on
}
}  // namespace

int vulkan_validation_message_count() { return g_validation_count.load(); }
std::string vulkan_validation_messages() {
  std::lock_guard<std::mutex> lock(g_validation_mutex);
  std::string s;
  for (auto& m : g_validation_messages) s += m + "\n";
  return s;
}
void vulkan_validation_reset() {
  std::lock_guard<std::mutex> lock(g_validation_mutex);
  g_validation_messages.clear();
  g_validation_count = 0;
}
bool vulkan_validation_active() { return g_validation_active.load(); }

namespace vk {

// The FUSOR_VK_COOPMAT=emulate test hook (vk_coopmat.cpp).
bool coopmat_emulation_requested(const PhysicalDeviceInfo& info);
void coopmat_note_emulation_device();

const char* result_name(VkResult r) {
  switch (r) {
#define FZ_CASE(x) \
  case x: return #x;
    FZ_CASE(VK_SUCCESS) FZ_CASE(VK_NOT_READY) FZ_CASE(VK_TIMEOUT) FZ_CASE(VK_EVENT_SET) FZ_CASE(VK_EVENT_RESET)
    FZ_CASE(VK_INCOMPLETE) FZ_CASE(VK_ERROR_OUT_OF_HOST_MEMORY) FZ_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    FZ_CASE(VK_ERROR_INITIALIZATION_FAILED) FZ_CASE(VK_ERROR_DEVICE_LOST) FZ_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    FZ_CASE(VK_ERROR_LAYER_NOT_PRESENT) FZ_CASE(VK_ERROR_EXTENSION_NOT_PRESENT) FZ_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    FZ_CASE(VK_ERROR_INCOMPATIBLE_DRIVER) FZ_CASE(VK_ERROR_TOO_MANY_OBJECTS) FZ_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    FZ_CASE(VK_ERROR_FRAGMENTED_POOL) FZ_CASE(VK_ERROR_UNKNOWN) FZ_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    FZ_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE) FZ_CASE(VK_ERROR_FRAGMENTATION)
    FZ_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) FZ_CASE(VK_PIPELINE_COMPILE_REQUIRED)
#undef FZ_CASE
    default: return "VkResult(unknown)";
  }
}

std::string hex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += d[p[i] >> 4], s += d[p[i] & 15];
  return s;
}


// ---- physical devices -------------------------------------------------------------------------

std::string PhysicalDeviceInfo::type_name() const {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string PhysicalDeviceInfo::details() const {
  std::ostringstream s;
  s << "type=" << type_name() << " api=" << VK_API_VERSION_MAJOR(api_version) << "." << VK_API_VERSION_MINOR(api_version)
    << "." << VK_API_VERSION_PATCH(api_version) << " subgroup=" << subgroup_size << " shared=" << max_shared_memory
    << " groups=[" << max_group_count[0] << "," << max_group_count[1] << "," << max_group_count[2] << "]"
    << " fp16=" << shader_float16 << " fp64=" << shader_float64 << " int64=" << shader_int64 << " " << coopmat_summary(*this)
    << " storage_range=" << max_storage_buffer_range << " units=" << compute_units;
  // What float controls let a kernel keep, per width: d = denormals, z = signed zero/inf/NaN.
  s << " preserves=";
  if (!float_controls) {
    s << "unknown(pre-1.2)";
  } else {
    const char* widths[3] = {"fp16", "fp32", "fp64"};
    for (int i = 0; i < 3; ++i)
      s << (i ? "," : "") << widths[i] << ":" << (denorm_preserve[i] ? "denorm" : "-") << "/"
        << (signed_zero_inf_nan_preserve[i] ? "szinfnan" : "-") << (rounding_rte[i] ? "/rte" : "");
    if (f16_convert_exact()) s << " f16-stores=convert";
  }
  return s.str();
}

std::string PhysicalDeviceInfo::numerics_note() const {
  // Only the widths kernels use: fp32 always, fp16 where it can be stored or computed, fp64 where offered.
  const bool used[3] = {shader_float16 || storage_16bit, true, shader_float64};
  const char* widths[3] = {"fp16", "fp32", "fp64"};
  std::string denorm, szinfnan;
  for (int i = 0; i < 3; ++i) {
    if (!used[i]) continue;
    if (!float_controls || !denorm_preserve[i]) denorm += std::string(denorm.empty() ? "" : ", ") + widths[i];
    if (!float_controls || !signed_zero_inf_nan_preserve[i]) szinfnan += std::string(szinfnan.empty() ? "" : ", ") + widths[i];
  }
  std::string note;
  if (!denorm.empty()) note = "may flush denormals to zero in " + denorm + " (no DenormPreserve)";
  if (!szinfnan.empty())
    note += (note.empty() ? "" : "; ") + std::string("may not keep the sign of zero, inf and NaN in ") + szinfnan +
            " (no SignedZeroInfNanPreserve)";
  // Measured on Mesa 22.3 (tests/test_vulkan_float_controls.cpp): llvmpipe's code generator
  // folds a literal 0.0 operand (x + 0.0 -> x, x * 0.0 -> 0.0) although it reports and gets
  // SignedZeroInfNanPreserve; the same sums with the zero read from memory are right.
  if (name.rfind("llvmpipe", 0) == 0)
    note += (note.empty() ? "" : "; ") +
            std::string("folds literal 0.0 operands (x + 0.0 -> x, x * 0.0 -> 0.0: wrong for -0.0, inf, NaN)");
  return note;
}

namespace {

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

PhysicalDeviceInfo query_device(VkPhysicalDevice pd) {
  PhysicalDeviceInfo info;
  info.handle = pd;
  // Properties: core + subgroup + IDs (1.1 structs; fusor needs a 1.1+ device anyway).
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  subgroup.pNext = &ids;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  vkGetPhysicalDeviceProperties(pd, &props.properties);
  // Float controls are core (and valid to chain) from 1.2 on.
  VkPhysicalDeviceFloatControlsProperties fc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  if (props.properties.apiVersion >= VK_API_VERSION_1_2) ids.pNext = &fc;
  vkGetPhysicalDeviceProperties2(pd, &props);
  const VkPhysicalDeviceProperties& p = props.properties;
  if (p.apiVersion >= VK_API_VERSION_1_2) {
    info.float_controls = true;
    info.denorm_preserve[0] = fc.shaderDenormPreserveFloat16;
    info.denorm_preserve[1] = fc.shaderDenormPreserveFloat32;
    info.denorm_preserve[2] = fc.shaderDenormPreserveFloat64;
    info.signed_zero_inf_nan_preserve[0] = fc.shaderSignedZeroInfNanPreserveFloat16;
    info.signed_zero_inf_nan_preserve[1] = fc.shaderSignedZeroInfNanPreserveFloat32;
    info.signed_zero_inf_nan_preserve[2] = fc.shaderSignedZeroInfNanPreserveFloat64;
    // Denorm modes may have to agree across widths (VUID-RuntimeSpirv-denormBehaviorIndependence-06289/06290):
    // keep only a combination the device accepts.
    // RTE for 16-bit results (fp16 stores, vk_dialect.cpp from_float): widths tied by
    // roundingModeIndependence get it together, or none does.
    bool* r = info.rounding_rte;
    r[0] = fc.shaderRoundingModeRTEFloat16;
    if (fc.roundingModeIndependence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY)
      r[0] = r[2] = r[0] && fc.shaderRoundingModeRTEFloat64;
    else if (fc.roundingModeIndependence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE)
      r[0] = r[1] = r[2] = r[0] && fc.shaderRoundingModeRTEFloat32 && fc.shaderRoundingModeRTEFloat64;
    // FUSOR_VK_F16_RTE=0 keeps the software rounding on every store (an A/B knob; the fp16
    // neighbourhood tests passed bit for bit with the hardware conversion on an H100).
    if (const char* e = std::getenv("FUSOR_VK_F16_RTE"); e && std::strcmp(e, "0") == 0) r[0] = r[1] = r[2] = false;
    bool* d = info.denorm_preserve;
    if (fc.denormBehaviorIndependence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY && d[0] != d[2])
      d[0] = d[2] = false;
    else if (fc.denormBehaviorIndependence == VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_NONE && !(d[0] && d[1] && d[2]))
      d[0] = d[1] = d[2] = false;
  }
  const VkPhysicalDeviceLimits& l = p.limits;
  info.name = p.deviceName;
  info.type = p.deviceType;
  info.api_version = p.apiVersion;
  info.driver_version = p.driverVersion;
  info.vendor_id = p.vendorID;
  info.device_id = p.deviceID;
  std::copy(std::begin(ids.deviceUUID), std::end(ids.deviceUUID), info.device_uuid.begin());
  std::copy(std::begin(ids.driverUUID), std::end(ids.driverUUID), info.driver_uuid.begin());
  info.subgroup_size = subgroup.subgroupSize;
  const VkSubgroupFeatureFlags ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_VOTE_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  info.subgroup_reduce = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (subgroup.supportedOperations & ops) == ops;
  info.subgroup_shuffle = info.subgroup_reduce && (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  info.max_shared_memory = l.maxComputeSharedMemorySize;
  for (int i = 0; i < 3; ++i) info.max_group_count[i] = l.maxComputeWorkGroupCount[i], info.max_group_size[i] = l.maxComputeWorkGroupSize[i];
  info.max_invocations = l.maxComputeWorkGroupInvocations;
  info.max_storage_buffer_range = l.maxStorageBufferRange;
  info.max_storage_buffers = std::min(l.maxPerStageDescriptorStorageBuffers, l.maxDescriptorSetStorageBuffers);
  info.min_storage_offset_alignment = l.minStorageBufferOffsetAlignment;
  info.timestamp_period = l.timestampPeriod;

  // Features: the 1.1/1.2 structs are valid to chain only on 1.2+ devices.
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  bool v12 = p.apiVersion >= VK_API_VERSION_1_2;
  if (v12) f2.pNext = &f11, f11.pNext = &f12;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  info.shader_int64 = f2.features.shaderInt64;
  info.shader_float64 = f2.features.shaderFloat64;
  info.shader_int16 = f2.features.shaderInt16;
  if (v12) {
    info.storage_16bit = f11.storageBuffer16BitAccess;
    info.shader_float16 = f12.shaderFloat16;
    info.shader_int8 = f12.shaderInt8;
    info.storage_8bit = f12.storageBuffer8BitAccess;
  }
  // RoundingModeRTE is requested only where fp16 stores use it (f16_convert_exact): elsewhere
  // the modules stay as they were.
  if (!(info.rounding_rte[0] && info.denorm_preserve[0] && info.shader_float16)) std::fill_n(info.rounding_rte, 3, false);

  uint32_t n = 0;
  bool sm_builtins = false, amd_cores = false;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) == VK_SUCCESS) {
    std::vector<VkExtensionProperties> exts(n);
    if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data()) == VK_SUCCESS)
      for (auto& e : exts) {
        if (std::strcmp(e.extensionName, "VK_KHR_cooperative_matrix") == 0) info.cooperative_matrix = true;
        if (std::strcmp(e.extensionName, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME) == 0) sm_builtins = true;
        if (std::strcmp(e.extensionName, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME) == 0) amd_cores = true;
      }
  }
  // Compute units (a property query needs the extension listed, not enabled).
  if (sm_builtins) {
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &sm;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    info.compute_units = sm.shaderSMCount;
  } else if (amd_cores) {
    VkPhysicalDeviceShaderCorePropertiesAMD cp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &cp;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    info.compute_units = cp.shaderEngineCount * cp.shaderArraysPerEngineCount * cp.computeUnitsPerShaderArray;
  } else if (info.is_cpu()) {
    info.compute_units = std::thread::hardware_concurrency();
  }

  // Queue family: compute-capable, preferring one with timestamps.
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
  int best = -1;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (best < 0 || (fams[i].timestampValidBits > 0 && fams[best].timestampValidBits == 0)) best = static_cast<int>(i);
  }
  if (best >= 0) {
    info.queue_family = static_cast<uint32_t>(best);
    info.timestamps = fams[best].timestampValidBits > 0 && info.timestamp_period > 0;
  } else {
    info.queue_family = UINT32_MAX;
  }
  return info;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  if (vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
  for (auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool has_instance_extension(const char* layer, const char* name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(layer, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  if (vkEnumerateInstanceExtensionProperties(layer, &n, exts.data()) != VK_SUCCESS) return false;
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

bool env_validation() {
  const char* v = std::getenv("FUSOR_VK_VALIDATION");
  return v && *v && std::string(v) != "0";
}

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

}  // namespace

bool validation_layer_installed() { return has_layer(kValidationLayer); }

// ---- instance -----------------------------------------------------------------------------------

void Instance::create(bool want_validation) {
  uint32_t loader_version = VK_API_VERSION_1_0;
  auto enumerate_version = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
  if (enumerate_version) check_vk(enumerate_version(&loader_version), "vkEnumerateInstanceVersion");
  if (loader_version < VK_API_VERSION_1_1)
    throw Error("vulkan", "the Vulkan loader supports only API 1.0; fusor needs 1.1 or newer");

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "fusor";
  app.pEngineName = "fusor";
  // 1.2 is what the SPIR-V targets; devices that only do 1.1 still enumerate.
  app.apiVersion = std::min<uint32_t>(loader_version, VK_API_VERSION_1_2);

  std::vector<const char*> layers, extensions;
  validation_ = want_validation && has_layer(kValidationLayer);
  bool debug_utils = false, features_ext = false;
  if (validation_) {
    layers.push_back(kValidationLayer);
    debug_utils = has_instance_extension(nullptr, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
                  has_instance_extension(kValidationLayer, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    features_ext = has_instance_extension(kValidationLayer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    if (debug_utils) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (features_ext) extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    // Without a messenger nothing could be counted: treat as "validation not active".
    if (!debug_utils) validation_ = false, layers.clear(), extensions.clear();
  }

  VkDebugUtilsMessengerCreateInfoEXT dbg{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  dbg.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  dbg.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  dbg.pfnUserCallback = debug_callback;
  // Synchronization validation catches a missing barrier between dependent dispatches,
  // which is the one thing the recorder decides on its own.
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;

  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  if (validation_) {
    ci.pNext = &dbg;  // also reports problems inside vkCreateInstance itself
    if (features_ext) dbg.pNext = &features;
  }
  check_vk(vkCreateInstance(&ci, nullptr, &instance_), "vkCreateInstance");
  g_validation_active = validation_;

  if (validation_) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create_messenger) throw Error("vulkan", "vkGetInstanceProcAddr(vkCreateDebugUtilsMessengerEXT) returned null");
    dbg.pNext = nullptr;
    check_vk(create_messenger(instance_, &dbg, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
  }

  uint32_t n = 0;
  check_vk(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> pds(n);
  check_vk(vkEnumeratePhysicalDevices(instance_, &n, pds.data()), "vkEnumeratePhysicalDevices");
  for (auto pd : pds) {
    PhysicalDeviceInfo info = query_device(pd);
    query_cooperative_matrix(instance_, info);
    // fusor needs compute queues and the 1.1 property/feature queries it just used.
    if (info.queue_family == UINT32_MAX || info.api_version < VK_API_VERSION_1_1) continue;
    devices_.push_back(std::move(info));
  }
  std::stable_sort(devices_.begin(), devices_.end(),
                   [](const PhysicalDeviceInfo& a, const PhysicalDeviceInfo& b) { return type_rank(a.type) < type_rank(b.type); });
}

Instance::~Instance() {
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

std::shared_ptr<Instance> Instance::get() {
  // One instance per validation mode for the life of the process: NVIDIA's driver refuses
  // vkCreateInstance (VK_ERROR_INCOMPATIBLE_DRIVER) after a few dozen create/destroy cycles,
  // which tests that create many backends would reach. Never destroyed, so process exit does
  // not race the driver's own teardown.
  static std::mutex m;
  static auto* cached = new std::map<bool, std::shared_ptr<Instance>>();
  std::lock_guard<std::mutex> lock(m);
  bool want = env_validation();
  auto& slot = (*cached)[want];
  if (!slot) {
    std::shared_ptr<Instance> inst(new Instance());
    inst->create(want);
    slot = inst;
  }
  g_validation_active = slot->validation_;
  return slot;
}

namespace {
std::atomic<long> g_opened_by{0};  // the process that opened the first device
}  // namespace

bool forked_after_open() {
  const long p = g_opened_by.load();
  return p != 0 && p != static_cast<long>(getpid());
}

void Context::check_same_process() const {
  if (pid_ != static_cast<long>(getpid()))
    throw Error("vulkan", "this process was forked from process " + std::to_string(pid_) +
                              " after it opened Vulkan; a Vulkan device does not survive fork (use multiprocessing's 'spawn' "
                              "start method, or open Vulkan only in the child)");
}

// ---- logical device -----------------------------------------------------------------------------

Context::Context(std::shared_ptr<Instance> inst, int index) : instance_(std::move(inst)) {
  long none = 0;
  g_opened_by.compare_exchange_strong(none, pid_);
  const auto& devs = instance_->devices();
  if (index < 0 || index >= static_cast<int>(devs.size()))
    throw Error("vulkan", "device index " + std::to_string(index) + " out of range (" + std::to_string(devs.size()) +
                              " Vulkan device(s))");
  info_ = devs[index];

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = info_.queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;

  // Enable exactly the optional features the device offers; generated code checks the same flags.
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f2.features.shaderInt64 = info_.shader_int64;
  f2.features.shaderFloat64 = info_.shader_float64;
  f2.features.shaderInt16 = info_.shader_int16;
  if (info_.api_version >= VK_API_VERSION_1_2) {
    f11.storageBuffer16BitAccess = info_.storage_16bit;
    f12.shaderFloat16 = info_.shader_float16;
    f12.shaderInt8 = info_.shader_int8;
    f12.storageBuffer8BitAccess = info_.storage_8bit;
    f2.pNext = &f11;
    f11.pNext = &f12;
  }
  // Cooperative matrices (vk_coopmat.h): the extension the device's shapes came from.
  alignas(8) unsigned char coopmat_features[64];
  std::vector<const char*> extensions;
  if (const char* ext = coopmat_extension(info_)) {
    extensions.push_back(ext);
    // gemm_coopmat.glsl's modules use the Vulkan memory model; enabled only here, since
    // enabling it changes the rules for every other module (see query_cooperative_matrix).
    f12.vulkanMemoryModel = f12.vulkanMemoryModelDeviceScope = info_.vulkan_memory_model;
    f12.pNext = chain_coopmat_features(info_, coopmat_features, f12.pNext);
  }
  // The emulation test hook (vk_coopmat.h FUSOR_VK_COOPMAT=emulate) runs the template's
  // Vulkan-memory-model code without the extension.
  if (coopmat_emulation_requested(info_)) {
    f12.vulkanMemoryModel = f12.vulkanMemoryModelDeviceScope = VK_TRUE;
    coopmat_note_emulation_device();
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fstats{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (const char* e = std::getenv("FUSOR_VK_PIPELINE_STATS"); e && std::strcmp(e, "1") == 0) {
    if (has_extension(info_.handle, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
      extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
      fstats.pipelineExecutableInfo = VK_TRUE;
      fstats.pNext = f2.pNext;
      f2.pNext = &fstats;
      pipeline_stats_ = true;
    } else {
      std::fprintf(stderr, "fusor: FUSOR_VK_PIPELINE_STATS: %s offers no VK_KHR_pipeline_executable_properties\n",
                   info_.name.c_str());
    }
  }
  // bf16 matmuls on cooperative matrices: VK_KHR_shader_bfloat16 (+ KHR coopmat beside NV's),
  // last, so a refused device is retried with exactly the extensions and features before them.
  alignas(8) unsigned char bf16_features[128];
  const size_t base_extensions = extensions.size();
  void* const before_bf16 = f12.pNext;
  f12.pNext = chain_bf16_coopmat_features(info_, bf16_features, f12.pNext, extensions);
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &f2;
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkResult created = vkCreateDevice(info_.handle, &dci, nullptr, &device_);
  if (created != VK_SUCCESS && info_.coopmat_bf16) {  // a driver refusing the pair: bf16 matmuls stay tiled
    info_.coopmat_bf16 = false;
    extensions.resize(base_extensions);
    f12.pNext = before_bf16;
    dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    dci.ppEnabledExtensionNames = extensions.data();
    created = vkCreateDevice(info_.handle, &dci, nullptr, &device_);
  }
  check_vk(created, "vkCreateDevice");
  vkGetDeviceQueue(device_, info_.queue_family, 0, &queue_);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pci.queueFamilyIndex = info_.queue_family;
  check_vk(vkCreateCommandPool(device_, &pci, nullptr, &upload_pool_), "vkCreateCommandPool");

  vkGetPhysicalDeviceMemoryProperties(info_.handle, &memory_);
  if (info_.type == VK_PHYSICAL_DEVICE_TYPE_CPU || info_.type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) {
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if ((memory_.memoryTypes[i].propertyFlags & want) == want) unified_memory_ = true;
  }

  // Pipeline cache: keyed by device and driver so a different driver never sees stale data
  // (the driver also checks the header). The file is a verified entry (runtime/disk_cache.h):
  // a damaged, truncated or foreign one is ignored and the cache starts empty.
  std::string blob;
  if (std::string dir = compile_cache_dir("vulkan"); !dir.empty()) {
    pipeline_cache_key_ = "vulkan pipeline cache\n" + hex(info_.device_uuid.data(), info_.device_uuid.size()) + "\n" +
                          std::to_string(info_.driver_version) + "\n" + info_.name;
    pipeline_cache_dir_ = dir;
    if (auto b = DiskCache(dir, ".pipelines").load(pipeline_cache_key_)) blob = std::move(*b);
  }
  VkPipelineCacheCreateInfo cci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  cci.initialDataSize = blob.size();
  cci.pInitialData = blob.empty() ? nullptr : blob.data();
  if (vkCreatePipelineCache(device_, &cci, nullptr, &pipeline_cache_) != VK_SUCCESS) {
    // A corrupt file must not break compilation: start empty.
    cci.initialDataSize = 0;
    cci.pInitialData = nullptr;
    check_vk(vkCreatePipelineCache(device_, &cci, nullptr, &pipeline_cache_), "vkCreatePipelineCache");
  }
#ifdef FUSOR_HAVE_CUDA
  // In the constructor, not on a thread of its own: a thread still inside libcuda when the
  // process exits races the driver's and our static destructors. The CLI opens the device on a
  // thread beside the ONNX parse, which hides most of cuInit's ~0.1-0.3 s. Never throws.
  if (holds_cuda_context(info_)) cuda_context_held_ = hold_cuda_primary_context(info_.device_uuid);
#endif
}

bool holds_cuda_context(const PhysicalDeviceInfo& info) {
  if (info.vendor_id != 0x10DE) return false;
  const char* e = std::getenv("FUSOR_VK_HOLD_CUDA_CONTEXT");
  if (e && *e) return std::strcmp(e, "0") != 0;
  // Measured on a datacenter part (H200). GeForce and TITAN boards are left alone: there a CUDA
  // context is what pins the compute performance state (P2) that lowers memory clocks.
  return info.name.find("GeForce") == std::string::npos && info.name.find("TITAN") == std::string::npos;
}

void Context::save_pipeline_cache() {
  if (pipeline_cache_dir_.empty() || !pipeline_cache_) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::string data(size, '\0');
  if (vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()) != VK_SUCCESS) return;
  data.resize(size);
  // Atomic, collision-free replace (mkstemp + rename) so concurrent processes never read a torn file.
  DiskCache(pipeline_cache_dir_, ".pipelines").store(pipeline_cache_key_, data);
}

Context::~Context() {
  if (!device_) return;
  vkDeviceWaitIdle(device_);
  save_pipeline_cache();
  if (pipeline_cache_) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (upload_pool_) vkDestroyCommandPool(device_, upload_pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

std::shared_ptr<Context> Context::get(int index) {
  // Kept for the process, like the instance (same driver limit for logical devices).
  static std::mutex m;
  static auto* cached = new std::map<std::pair<VkInstance, int>, std::shared_ptr<Context>>();
  std::shared_ptr<Instance> inst = Instance::get();
  std::lock_guard<std::mutex> lock(m);
  auto& slot = (*cached)[std::make_pair(inst->handle(), index)];
  if (!slot) slot.reset(new Context(inst, index));
  slot->check_same_process();
  return slot;
}

VkCommandBuffer Context::begin_once() {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = upload_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  check_vk(vkAllocateCommandBuffers(device_, &ai, &cb), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (VkResult r = vkBeginCommandBuffer(cb, &bi); r != VK_SUCCESS) {
    vkFreeCommandBuffers(device_, upload_pool_, 1, &cb);
    check_vk(r, "vkBeginCommandBuffer");
  }
  return cb;
}

void Context::submit_and_wait(VkCommandBuffer cb) {
  VkFence fence = VK_NULL_HANDLE;
  auto cleanup = [&] {
    if (fence) vkDestroyFence(device_, fence, nullptr);
    vkFreeCommandBuffers(device_, upload_pool_, 1, &cb);
  };
  try {
    check_vk(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check_vk(vkCreateFence(device_, &fci, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    check_vk(vkQueueSubmit(queue_, 1, &si, fence), "vkQueueSubmit");
    check_vk(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
}

}  // namespace vk
}  // namespace fusor

namespace fusor {
bool vulkan_validation_layer_installed() { return vk::validation_layer_installed(); }
}  // namespace fusor
