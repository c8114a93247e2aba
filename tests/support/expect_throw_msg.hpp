// EXPECT_THROW_MSG(statement, Type, substring): the statement throws Type and its what()
// contains substring (fmt's gtest-extra idea), so tests pin the messages users read. The
// statement is an expression whose value, if any, is never produced: a [[nodiscard]] one
// (a Work, a RunReport) is discarded on purpose.
#pragma once

#include <string>

#include <gtest/gtest.h>

#define EXPECT_THROW_MSG(statement, Type, substring)                                    \
  do {                                                                                  \
    bool ranklab_thrown_ = false;                                                       \
    try {                                                                               \
      static_cast<void>(statement);                                                     \
    } catch (const Type& e) {                                                           \
      ranklab_thrown_ = true;                                                           \
      EXPECT_NE(std::string(e.what()).find(substring), std::string::npos)               \
          << "message: " << e.what() << "\nexpected to contain: " << (substring);       \
    }                                                                                   \
    EXPECT_TRUE(ranklab_thrown_) << #statement " did not throw " #Type;                 \
  } while (false)
