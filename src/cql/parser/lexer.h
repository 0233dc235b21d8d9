// CQL lexer: text -> tokens with 1-based line and column, following the
// lexical rules of the CQL reference (Cassandra's Lexer.g): case-insensitive
// keywords and unquoted identifiers (folded to lower case), "quoted
// identifiers" (case kept, "" escapes a quote), 'strings' ('' escapes a
// quote), $$dollar strings$$, integers, floats (with exponent, NaN,
// Infinity), 0x blobs, UUIDs, durations (1h30m, P1D, ...), bind markers ?
// and :name, punctuation, -- and // line comments, /* block */ comments.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::cql {

struct SourcePosition {
  int line = 1;
  int column = 1;
};

enum class TokenKind {
  kIdentifier,        // unquoted, lower-cased; keywords are identifiers the parser recognises
  kQuotedIdentifier,  // "Name", case kept
  kString,            // 'text' or $$text$$, unescaped
  kInteger,           // 123, -5 (sign handled by the parser)
  kFloat,             // 1.5, 1e10, NaN, Infinity
  kUuid,              // 8-4-4-4-12 hex
  kBlob,              // 0x..., text keeps the hex digits without 0x
  kDuration,          // 1h30m, P1DT2H, ...
  kBindMarker,        // ?
  kNamedBindMarker,   // :name (text = name)
  kPunctuation,       // ( ) [ ] { } , ; . = < > <= >= != + - * : 
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  std::string raw;  // the text as written (identifiers before lower-casing), for messages
  SourcePosition position;
};

// Errors: SyntaxError "line L:C <what>" for an unterminated string or
// comment, or a character that starts no token.
Result<std::vector<Token>> Tokenize(std::string_view cql);

}  // namespace tessera::cql
