// User-defined functions and aggregates in the catalog (CREATE / DROP
// FUNCTION and AGGREGATE). Each is one JSON document in the meta column
// family (FROZEN ON DISK): keys "function/<ks>/<name>(<types>)" and
// "aggregate/<ks>/<name>(<types>)", <types> the argument types' CQL text
// joined by ", "; types are stored as CQL text and parsed back against the
// keyspace's user types.
#include <nlohmann/json.hpp>

#include "common/bytes.h"
#include "db/catalog.h"

namespace tessera {
namespace {

std::string Key(const char* kind, const std::string& ks, const std::string& name, const std::string& types_text) {
  return std::string(kind) + "/" + ks + "/" + name + "(" + types_text + ")";
}

std::string Key(const char* kind, const std::string& ks, const std::string& name, const std::vector<CqlType>& types) {
  return Key(kind, ks, name, JoinedTypes(types));
}

std::string FunctionToJson(const UserFunction& f) {
  nlohmann::json j{{"keyspace", f.keyspace}, {"name", f.name}, {"argument_names", f.argument_names},
                   {"argument_types", TypeTexts(f.argument_types)}, {"return_type", f.return_type.ToCql()},
                   {"called_on_null_input", f.called_on_null_input}, {"language", f.language}, {"body", f.body}};
  return j.dump();
}

std::string AggregateToJson(const UserAggregate& a) {
  nlohmann::json j{{"keyspace", a.keyspace}, {"name", a.name}, {"argument_types", TypeTexts(a.argument_types)},
                   {"state_function", a.state_function}, {"state_type", a.state_type.ToCql()},
                   {"final_function", a.final_function}, {"return_type", a.return_type.ToCql()},
                   {"initial_condition_literal", a.initial_condition_literal}};
  if (a.initial_state) j["initial_state_hex"] = ToHex(*a.initial_state);
  return j.dump();
}

Result<std::vector<CqlType>> ParseTypes(const nlohmann::json& texts, const UserTypeLookup* lookup) {
  std::vector<CqlType> out;
  for (const auto& t : texts) {
    TESSERA_ASSIGN_OR_RETURN(CqlType type, CqlType::Parse(t.get<std::string>(), lookup));
    out.push_back(std::move(type));
  }
  return out;
}

}  // namespace

Status Catalog::LoadFunctions() {
  for (const char* kind : {"function/", "aggregate/"}) {
    TESSERA_ASSIGN_OR_RETURN(auto docs, engine_->MetaScan(kind));
    for (const auto& [key, text] : docs) {
      nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) return Status::Corruption("unreadable " + key);
      try {
        const std::string ks = j.at("keyspace").get<std::string>();
        UserTypeLookup lookup = [this, ks](const std::string& name) { return FindTypeLocked(ks, name); };
        auto types = ParseTypes(j.at("argument_types"), &lookup);
        if (!types.ok()) return Status::Corruption(key + ": " + types.status().message());
        auto parse = [&](const char* field) { return CqlType::Parse(j.at(field).get<std::string>(), &lookup); };
        auto return_type = parse("return_type");
        if (!return_type.ok()) return Status::Corruption(key + ": " + return_type.status().message());
        if (std::string(kind) == "function/") {
          UserFunction f{ks, j.at("name").get<std::string>(), j.at("argument_names").get<std::vector<std::string>>(),
                         *types, *return_type, j.at("called_on_null_input").get<bool>(),
                         j.at("language").get<std::string>(), j.at("body").get<std::string>()};
          functions_.insert_or_assign(FunctionKey{ks, f.name, JoinedTypes(f.argument_types)}, std::move(f));
        } else {
          auto state_type = parse("state_type");
          if (!state_type.ok()) return Status::Corruption(key + ": " + state_type.status().message());
          UserAggregate a{ks, j.at("name").get<std::string>(), *types, j.at("state_function").get<std::string>(),
                          *state_type, j.at("final_function").get<std::string>(), std::nullopt,
                          j.at("initial_condition_literal").get<std::string>(), *return_type};
          if (j.contains("initial_state_hex")) {
            std::string state;
            if (!FromHex(j["initial_state_hex"].get<std::string>(), &state)) return Status::Corruption(key + ": initial state");
            a.initial_state = std::move(state);
          }
          aggregates_.insert_or_assign(FunctionKey{ks, a.name, JoinedTypes(a.argument_types)}, std::move(a));
        }
      } catch (const nlohmann::json::exception& e) {
        return Status::Corruption(key + ": " + e.what());
      }
    }
  }
  return Status::OK();
}

Status Catalog::DropFunctionsOfKeyspaceLocked(const std::string& keyspace) {
  for (auto it = functions_.begin(); it != functions_.end();) {
    if (std::get<0>(it->first) != keyspace) { ++it; continue; }
    TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(Key("function", keyspace, std::get<1>(it->first), std::get<2>(it->first))));
    it = functions_.erase(it);
  }
  for (auto it = aggregates_.begin(); it != aggregates_.end();) {
    if (std::get<0>(it->first) != keyspace) { ++it; continue; }
    TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(Key("aggregate", keyspace, std::get<1>(it->first), std::get<2>(it->first))));
    it = aggregates_.erase(it);
  }
  return Status::OK();
}

Status Catalog::CreateFunction(const UserFunction& f, bool or_replace) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!keyspaces_.count(f.keyspace)) return Status::InvalidArgument("Keyspace " + f.keyspace + " doesn't exist");
  for (const auto& [key, a] : aggregates_) {
    if (std::get<0>(key) == f.keyspace && std::get<1>(key) == f.name) {
      return Status::InvalidArgument("Function " + f.keyspace + "." + f.name + " already exists as an aggregate");
    }
  }
  const FunctionKey key{f.keyspace, f.name, JoinedTypes(f.argument_types)};
  auto existing = functions_.find(key);
  if (existing != functions_.end() && !or_replace) {
    return Status::AlreadyExists("Function " + FunctionSignature(f.keyspace, f.name, f.argument_types) + " already exists");
  }
  if (existing != functions_.end() && !(existing->second.return_type == f.return_type)) {
    return Status::InvalidArgument("Cannot replace function " + FunctionSignature(f.keyspace, f.name, f.argument_types) +
                                   ", the new return type " + f.return_type.ToCql() + " is not compatible with the return type " +
                                   existing->second.return_type.ToCql() + " of existing function");
  }
  TESSERA_RETURN_IF_ERROR(engine_->MetaPut(Key("function", f.keyspace, f.name, f.argument_types), FunctionToJson(f)));
  functions_.insert_or_assign(key, f);
  ++version_;
  return Status::OK();
}

Status Catalog::CreateAggregate(const UserAggregate& a, bool or_replace) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!keyspaces_.count(a.keyspace)) return Status::InvalidArgument("Keyspace " + a.keyspace + " doesn't exist");
  for (const auto& [key, f] : functions_) {
    if (std::get<0>(key) == a.keyspace && std::get<1>(key) == a.name) {
      return Status::InvalidArgument("Aggregate " + a.keyspace + "." + a.name + " already exists as a function");
    }
  }
  const FunctionKey key{a.keyspace, a.name, JoinedTypes(a.argument_types)};
  if (aggregates_.count(key) && !or_replace) {
    return Status::AlreadyExists("Aggregate " + FunctionSignature(a.keyspace, a.name, a.argument_types) + " already exists");
  }
  TESSERA_RETURN_IF_ERROR(engine_->MetaPut(Key("aggregate", a.keyspace, a.name, a.argument_types), AggregateToJson(a)));
  aggregates_.insert_or_assign(key, a);
  ++version_;
  return Status::OK();
}

namespace {

// The one definition of `name` in `keyspace` (of that signature when given)
// among `defs`. `what`: "Function" or "Aggregate". Errors: NotFound, and
// InvalidArgument in Cassandra's words when several overloads match.
template <typename Map>
Result<typename Map::iterator> FindOne(Map& defs, const std::string& keyspace, const std::string& name,
                                       const std::optional<std::vector<CqlType>>& argument_types, const std::string& what) {
  std::vector<typename Map::iterator> matches;
  for (auto it = defs.begin(); it != defs.end(); ++it) {
    if (std::get<0>(it->first) != keyspace || std::get<1>(it->first) != name) continue;
    if (argument_types && std::get<2>(it->first) != JoinedTypes(*argument_types)) continue;
    matches.push_back(it);
  }
  if (matches.empty()) {
    return Status::NotFound(argument_types ? what + " " + FunctionSignature(keyspace, name, *argument_types) + " doesn't exist"
                                           : what + " '" + keyspace + "." + name + "' doesn't exist");
  }
  if (matches.size() > 1) {
    std::string statement = what == "Function" ? "FUNCTION" : "AGGREGATE";
    return Status::InvalidArgument("'DROP " + statement + " " + name +
                                   "' matches multiple function definitions; specify the argument types by issuing a "
                                   "statement like 'DROP " + statement + " " + name + " (type [, ...])'. Hint: use cqlsh "
                                   "'DESCRIBE " + statement + " " + name + "' command to find all overloads");
  }
  return matches[0];
}

}  // namespace

Result<UserFunction> Catalog::DropFunction(const std::string& keyspace, const std::string& name,
                                           const std::optional<std::vector<CqlType>>& argument_types) {
  std::lock_guard<std::mutex> lock(mu_);
  TESSERA_ASSIGN_OR_RETURN(auto it, FindOne(functions_, keyspace, name, argument_types, "Function"));
  const UserFunction f = it->second;
  for (const auto& [key, a] : aggregates_) {
    if (std::get<0>(key) != keyspace) continue;
    if (a.state_function == name || a.final_function == name) {
      return Status::InvalidArgument("Function " + FunctionSignature(keyspace, name, f.argument_types) +
                                     " is still referenced by aggregate " + keyspace + "." + a.name);
    }
  }
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(Key("function", keyspace, name, f.argument_types)));
  functions_.erase(it);
  ++version_;
  return f;
}

Result<UserAggregate> Catalog::DropAggregate(const std::string& keyspace, const std::string& name,
                                             const std::optional<std::vector<CqlType>>& argument_types) {
  std::lock_guard<std::mutex> lock(mu_);
  TESSERA_ASSIGN_OR_RETURN(auto it, FindOne(aggregates_, keyspace, name, argument_types, "Aggregate"));
  const UserAggregate a = it->second;
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(Key("aggregate", keyspace, name, a.argument_types)));
  aggregates_.erase(it);
  ++version_;
  return a;
}

std::vector<UserFunction> Catalog::Functions(const std::string& keyspace) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<UserFunction> out;
  for (const auto& [key, f] : functions_) {
    if (std::get<0>(key) == keyspace) out.push_back(f);
  }
  return out;
}

std::vector<UserAggregate> Catalog::Aggregates(const std::string& keyspace) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<UserAggregate> out;
  for (const auto& [key, a] : aggregates_) {
    if (std::get<0>(key) == keyspace) out.push_back(a);
  }
  return out;
}

}  // namespace tessera
