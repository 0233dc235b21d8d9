#include "common/failpoints.h"

namespace tessera {

Status Failpoints::Set(const std::string& name, const std::string& action) {
  Action a;
  if (action == "pause") {
    a = Action::kPause;
  } else if (action == "error") {
    a = Action::kError;
  } else if (action == "off") {
    a = Action::kOff;
  } else {
    return Status::InvalidArgument("failpoint action must be pause, error or off, got '" + action + "'");
  }
  if (name.empty()) return Status::InvalidArgument("a failpoint needs a name");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (a == Action::kOff) {
      actions_.erase(name);
    } else {
      actions_[name] = a;
    }
    armed_.store(!actions_.empty(), std::memory_order_relaxed);
  }
  changed_.notify_all();
  return Status::OK();
}

Status Failpoints::SetFromFlag(const std::string& flag) {
  const size_t eq = flag.find('=');
  if (eq == std::string::npos) return Status::InvalidArgument("--failpoint takes NAME=ACTION, got '" + flag + "'");
  return Set(flag.substr(0, eq), flag.substr(eq + 1));
}

Status Failpoints::Hit(const std::string& name) {
  std::unique_lock<std::mutex> lock(mu_);
  auto action = [&] {
    auto it = actions_.find(name);
    return it == actions_.end() ? Action::kOff : it->second;
  };
  if (action() == Action::kPause) {
    ++paused_[name];
    changed_.wait(lock, [&] { return action() != Action::kPause; });
    if (--paused_[name] == 0) paused_.erase(name);
  }
  if (action() == Action::kError) return Status::IOError("failpoint " + name);
  return Status::OK();
}

void Failpoints::ReleaseAll() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    actions_.clear();
    armed_.store(false, std::memory_order_relaxed);
  }
  changed_.notify_all();
}

std::vector<std::string> Failpoints::Paused() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, n] : paused_) out.push_back(name);
  return out;
}

}  // namespace tessera
