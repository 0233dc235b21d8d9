// TestNode: a whole Tessera node in-process for tests that speak CQL over
// a real loopback socket — a fresh temporary data directory, any free CQL
// port, no admin port; stopped and removed when the TestNode goes.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "server/node.h"

namespace tessera::testing {

class TestNode {
 public:
  explicit TestNode(const std::string& name) {
    dir_ = std::filesystem::temp_directory_path() / ("tessera_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    server::NodeOptions o;
    o.database.data_dir = (dir_ / "data").string();
    o.cql_port = 0;
    o.admin_port = -1;
    auto node = server::Node::Start(o);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    if (node.ok()) node_ = std::move(node).value();
  }
  ~TestNode() {
    node_.reset();
    std::filesystem::remove_all(dir_);
  }
  uint16_t port() const { return node_ ? node_->cql_port() : 0; }
  // A scratch directory beside the data directory.
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<server::Node> node_;
};

}  // namespace tessera::testing
