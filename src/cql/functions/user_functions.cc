#include "cql/functions/user_functions.h"

#include <algorithm>

namespace tessera::cql {
namespace {

// "ks.f" names keyspace ks; "f" the statement's keyspace.
std::pair<std::string, std::string> Split(const std::string& keyspace, const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return {keyspace, name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

std::string CacheKey(const UserFunction& f) {
  std::string key = FunctionSignature(f.keyspace, f.name, f.argument_types) + "|" + f.return_type.ToCql() + "|";
  for (const auto& n : f.argument_names) key += n + ",";
  return key + "|" + f.language + "|" + f.body;
}

}  // namespace

std::vector<UserFunction> UserFunctions::FunctionOverloads(const std::string& keyspace, const std::string& name) const {
  const auto [ks, fn] = Split(keyspace, name);
  std::vector<UserFunction> out;
  for (auto& f : catalog_->Functions(ks)) {
    if (f.name == fn) out.push_back(std::move(f));
  }
  return out;
}

std::vector<UserAggregate> UserFunctions::AggregateOverloads(const std::string& keyspace, const std::string& name) const {
  const auto [ks, fn] = Split(keyspace, name);
  std::vector<UserAggregate> out;
  for (auto& a : catalog_->Aggregates(ks)) {
    if (a.name == fn) out.push_back(std::move(a));
  }
  return out;
}

bool UserFunctions::Exists(const std::string& keyspace, const std::string& name) const {
  return !FunctionOverloads(keyspace, name).empty() || IsAggregate(keyspace, name);
}

bool UserFunctions::IsAggregate(const std::string& keyspace, const std::string& name) const {
  return !AggregateOverloads(keyspace, name).empty();
}

Result<std::shared_ptr<const LuaFunction>> UserFunctions::Compiled(const UserFunction& f) const {
  const std::string key = CacheKey(f);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = compiled_.find(key); it != compiled_.end()) return it->second;
  }
  TESSERA_ASSIGN_OR_RETURN(auto compiled, LuaFunction::Compile(f, limits_));
  std::lock_guard<std::mutex> lock(mu_);
  // Entries of replaced or dropped definitions stay until the cache is large.
  if (compiled_.size() > 1000) compiled_.clear();
  return compiled_.try_emplace(key, std::move(compiled)).first->second;
}

Result<std::shared_ptr<const ResolvedAggregate>> UserFunctions::Resolve(const UserAggregate& a) const {
  auto out = std::make_shared<ResolvedAggregate>();
  out->definition = a;
  std::vector<CqlType> state_arguments{a.state_type};
  state_arguments.insert(state_arguments.end(), a.argument_types.begin(), a.argument_types.end());
  auto find = [&](const std::string& name, const std::vector<CqlType>& types) -> Result<std::shared_ptr<const LuaFunction>> {
    for (const auto& f : FunctionOverloads(a.keyspace, name)) {
      if (f.argument_types == types) return Compiled(f);
    }
    return Status::InvalidArgument("Function " + FunctionSignature(a.keyspace, name, types) + " of aggregate " +
                                   a.keyspace + "." + a.name + " doesn't exist");
  };
  TESSERA_ASSIGN_OR_RETURN(out->state_function, find(a.state_function, state_arguments));
  if (!a.final_function.empty()) {
    TESSERA_ASSIGN_OR_RETURN(out->final_function, find(a.final_function, {a.state_type}));
  }
  return std::shared_ptr<const ResolvedAggregate>(std::move(out));
}

Result<std::optional<std::string>> UserFunctions::Execute(const LuaFunction& f,
                                                          const std::vector<std::optional<std::string>>& arguments) {
  const UserFunction& d = f.definition();
  if (!d.called_on_null_input &&
      std::any_of(arguments.begin(), arguments.end(), [](const auto& a) { return !a.has_value(); })) {
    return std::optional<std::string>();
  }
  auto r = f.Call(arguments);
  if (r.ok()) return r;
  return Status::FunctionFailure("execution of '" + d.keyspace + "." + d.name + "[" + JoinedTypes(d.argument_types) +
                                     "]' failed: " + r.status().message(),
                                 Status::FunctionCall{d.keyspace, d.name, TypeTexts(d.argument_types)});
}

}  // namespace tessera::cql
