// A Vulkan test fixture under the validation layer (with synchronization validation): the
// backend is made in SetUp (skipped with the reason when no device exists), and TearDown fails
// the test on any validation message. Fixtures derive from it and add their own state.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "backends/backend.h"
#include "backends/vulkan/vulkan_backend.h"

namespace fusor::testing {

class ValidatedVulkanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("FUSOR_VK_VALIDATION", "1", 1);  // read when the instance is created
    vk_ = make_backend("vulkan");
    if (vk_->devices().empty()) GTEST_SKIP() << "no Vulkan device: the loader found none (install mesa-vulkan-drivers for lavapipe)";
    vulkan_validation_reset();
  }
  void TearDown() override {
    if (!vk_ || vk_->devices().empty()) return;
    EXPECT_EQ(vulkan_validation_message_count(), 0) << vulkan_validation_messages();
  }
  std::unique_ptr<Backend> vk_;
};

}  // namespace fusor::testing
