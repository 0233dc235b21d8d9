#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "tests/db/test_util.h"

namespace tessera {
namespace {

using namespace testing;

// Issue 2, must-show 3: a writer killed with SIGKILL in the middle of a
// write stream loses no acknowledged write.
TEST(DurabilityTest, KillNineLosesNoAcknowledgedWrite) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("tessera_kill9_" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  const std::string writer = std::string(TESSERA_BINARY_DIR) + "/tests/kill_writer";
  int64_t last_ack = -1;
  for (int round = 0; round < 3; ++round) {  // kill, reopen, write on, kill again
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      const std::string first = std::to_string(last_ack + 1);  // each round continues the key sequence
      execl(writer.c_str(), writer.c_str(), dir.c_str(), first.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    FILE* out = fdopen(fds[0], "r");
    char line[128];
    int64_t acks = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (acks < 20000 && std::chrono::steady_clock::now() < deadline && std::fgets(line, sizeof line, out)) {
      long long k;
      if (std::sscanf(line, "ack %lld", &k) == 1) {
        last_ack = std::max<int64_t>(last_ack, k);
        ++acks;
      }
    }
    kill(pid, SIGKILL);  // mid-stream: the child is writing as fast as it can
    int status = 0;
    waitpid(pid, &status, 0);
    std::fclose(out);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child exited on its own: " << status;
    ASSERT_GE(acks, 1000) << "the writer did not get going";
  }
  DatabaseOptions o;
  o.data_dir = dir;
  auto db = Database::Open(o);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto t = (*db)->GetTable("ks", "acked");
  ASSERT_TRUE(t.ok());
  int64_t missing = 0;
  for (int64_t k = 0; k <= last_ack; ++k) {
    auto row = (*db)->ReadRow(*t, {Bigint(k)}, {});
    if (!row.ok() || !row->has_value()) ++missing;
  }
  EXPECT_EQ(missing, 0) << "of " << last_ack + 1 << " acknowledged writes";
  std::printf("acknowledged writes checked after 3 kills: %lld\n", static_cast<long long>(last_ack + 1));
  db->reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
