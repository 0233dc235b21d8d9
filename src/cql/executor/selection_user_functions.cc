// Selection's calls of user-defined functions and aggregates: overload
// resolution (Cassandra's: the argument types decide; a literal fits any
// type it can be read as), the arguments of one row, and the fold of an
// aggregate (state function per row, then the final function).
#include <algorithm>
#include <set>

#include "common/bytes.h"
#include "cql/executor/literals.h"
#include "cql/executor/selection.h"
#include "cql/executor/term_binder.h"
#include "types/serialization.h"

namespace tessera::cql {

bool Selection::IsNativeFunction(const std::string& name) {
  static const std::set<std::string> kNative = {
      "token", "now", "currenttimeuuid", "uuid", "currenttimestamp", "currentdate", "currenttime", "totimestamp",
      "tounixtimestamp", "todate", "dateof", "unixtimestampof", "bit_reverse", "count", "min", "max", "sum", "avg",
      "tojson", "similarity_cosine", "similarity_euclidean", "similarity_dot_product"};
  if (name.rfind("system.", 0) == 0) return true;
  bool to_blob = false;
  return kNative.count(name) > 0 || BlobConversionType(name, &to_blob).has_value();
}

Status Selection::MakeUserCall(const TableSchema& t, const Selector& x, const UserFunctions& functions, Item* item,
                               std::string* name, CqlType* type) {
  const std::string fn = AsciiLower(x.name);
  std::vector<std::optional<size_t>> columns;  // per argument: its column, or none for a literal
  std::string listed;
  for (const Selector& arg : x.args) {
    if (arg.kind == Selector::Kind::kColumn) {
      const ColumnDef* c = t.FindColumn(arg.name);
      if (!c) return Status::InvalidArgument("Undefined column name " + arg.name);
      columns.emplace_back(static_cast<size_t>(c - t.columns.data()));
      listed += (listed.empty() ? "" : ", ") + c->name;
    } else if (arg.kind == Selector::Kind::kTerm && arg.term && arg.term->kind != Term::Kind::kBindMarker &&
               arg.term->kind != Term::Kind::kFunctionCall) {
      columns.emplace_back();
      listed += (listed.empty() ? "" : ", ") + arg.term->text;
    } else {
      return Status::InvalidArgument("Arguments of user-defined function " + x.name +
                                     " are columns or literals (bind markers and nested calls are not supported)");
    }
  }
  // The first overload whose every parameter takes its argument.
  auto fits = [&](const std::vector<CqlType>& parameters, std::vector<Item::Argument>* out) {
    if (parameters.size() != x.args.size()) return false;
    out->clear();
    for (size_t i = 0; i < parameters.size(); ++i) {
      Item::Argument a;
      if (columns[i]) {
        if (!(t.columns[*columns[i]].type.WithFrozen(true) == parameters[i].WithFrozen(true))) return false;
        a.column = *columns[i];
      } else {
        auto v = LiteralToValue(*x.args[i].term, parameters[i], "argument");
        if (!v.ok()) return false;
        if (!v->is_null()) {
          std::string bytes;
          if (!Serialize(parameters[i], *v, &bytes).ok()) return false;
          a.literal = std::move(bytes);
        }
      }
      out->push_back(std::move(a));
    }
    return true;
  };
  std::string known;
  if (functions.IsAggregate(t.keyspace, fn)) {
    for (const UserAggregate& a : functions.AggregateOverloads(t.keyspace, fn)) {
      if (!fits(a.argument_types, &item->arguments)) {
        known += (known.empty() ? "" : ", ") + FunctionSignature(a.keyspace, a.name, a.argument_types);
        continue;
      }
      TESSERA_ASSIGN_OR_RETURN(item->aggregate, functions.Resolve(a));
      item->kind = Item::Kind::kUserAggregate;
      *name = a.keyspace + "." + a.name + "(" + listed + ")";
      *type = a.return_type;
      return Status::OK();
    }
  } else {
    for (const UserFunction& f : functions.FunctionOverloads(t.keyspace, fn)) {
      if (!fits(f.argument_types, &item->arguments)) {
        known += (known.empty() ? "" : ", ") + FunctionSignature(f.keyspace, f.name, f.argument_types);
        continue;
      }
      TESSERA_ASSIGN_OR_RETURN(item->function, functions.Compiled(f));
      item->kind = Item::Kind::kUserFunction;
      *name = f.keyspace + "." + f.name + "(" + listed + ")";
      *type = f.return_type;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("Invalid call to function " + x.name +
                                 ", none of its type signatures match (known type signatures: " + known + ")");
}

std::vector<std::optional<std::string>> Selection::UserArguments(const Item& item, const SourceRow& row) {
  std::vector<std::optional<std::string>> out;
  out.reserve(item.arguments.size() + 1);
  for (const Item::Argument& a : item.arguments) out.push_back(a.column != SIZE_MAX ? row.values[a.column] : a.literal);
  return out;
}

std::optional<std::string> Selection::FoldUserAggregate(const Item& item, std::span<const SourceRow> rows,
                                                        Status* failure) {
  const ResolvedAggregate& a = *item.aggregate;
  const bool called_on_null = a.state_function->definition().called_on_null_input;
  std::optional<std::string> state = a.definition.initial_state;
  auto fail = [&](const Status& s) {
    if (failure && failure->ok()) *failure = s;
    return std::nullopt;
  };
  for (const SourceRow& row : rows) {
    std::vector<std::optional<std::string>> arguments{state};
    for (auto& v : UserArguments(item, row)) arguments.push_back(std::move(v));
    // A state function that RETURNS NULL ON NULL INPUT leaves the state as
    // it is for a null input, as Cassandra's aggregates do.
    if (!called_on_null && std::any_of(arguments.begin(), arguments.end(), [](const auto& v) { return !v; })) continue;
    auto next = UserFunctions::Execute(*a.state_function, arguments);
    if (!next.ok()) return fail(next.status());
    state = std::move(*next);
  }
  if (!a.final_function) return state;
  auto result = UserFunctions::Execute(*a.final_function, {state});
  if (!result.ok()) return fail(result.status());
  return std::move(*result);
}

}  // namespace tessera::cql
