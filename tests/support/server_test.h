// A test fixture with its own `baton server` process in a fresh directory, stopped and
// the directory removed after the test.
#pragma once

#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace baton::testing {

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(); }
  void TearDown() override {
    server_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  // A server on a fresh directory, started with `args` added to its command line.
  void StartServer(std::vector<std::string> args = {}) {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_, std::move(args));
    ASSERT_TRUE(server_->ok()) << server_->log();
  }
  // Stores a workflow definition (YAML), as the admin; fails the test unless created.
  void CreateWorkflow(const std::string& yaml) {
    auto r = server_->Admin().Send("POST", "/api/v1/workflows", yaml, "application/yaml");
    ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

}  // namespace baton::testing
