// The configuration table (src/core/config.cpp): typed reads of the environment, defaults,
// malformed values refused with the variable's name, and the help table.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "core/config.h"

namespace {

// Sets a variable for one scope and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const lt::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsWhenUnsetOrEmpty) {
  {
    ScopedEnv e("LT_CACHE_SIZE", nullptr);
    EXPECT_EQ(lt::config::integer("LT_CACHE_SIZE"), 1024);
  }
  {
    ScopedEnv e("LT_CACHE_SIZE", "");
    EXPECT_EQ(lt::config::integer("LT_CACHE_SIZE"), 1024);
  }
  ScopedEnv b("LT_BACKEND", nullptr);
  EXPECT_EQ(lt::config::choice("LT_BACKEND"), "mlir");
  ScopedEnv f("LT_MLIR_FUSE_REDUCTIONS", nullptr);
  EXPECT_TRUE(lt::config::flag("LT_MLIR_FUSE_REDUCTIONS"));
  ScopedEnv t("LT_DIST_TIMEOUT", nullptr);
  EXPECT_DOUBLE_EQ(lt::config::real("LT_DIST_TIMEOUT"), 60.0);
  ScopedEnv d("LT_CACHE_DIR", nullptr);
  EXPECT_FALSE(lt::config::text("LT_CACHE_DIR").has_value());
  EXPECT_FALSE(lt::config::is_set("LT_CACHE_DIR"));
  EXPECT_FALSE(lt::environment("LT_CACHE_DIR").has_value());
  // A default is a value, not a setting: environment() reports only what the user set.
  ScopedEnv r("MASTER_ADDR", nullptr);
  EXPECT_EQ(lt::config::text("MASTER_ADDR").value_or(""), "127.0.0.1");
  EXPECT_FALSE(lt::environment("MASTER_ADDR").has_value());
}

TEST(Config, ValuesParseAsTheirType) {
  ScopedEnv a("LT_CACHE_SIZE", "7");
  EXPECT_EQ(lt::config::integer("LT_CACHE_SIZE"), 7);
  ScopedEnv b("LT_BACKEND", "interp");
  EXPECT_EQ(lt::config::choice("LT_BACKEND"), "interp");
  ScopedEnv c("LT_MLIR_FUSE_REDUCTIONS", "0");
  EXPECT_FALSE(lt::config::flag("LT_MLIR_FUSE_REDUCTIONS"));
  ScopedEnv d("LT_DIST_TIMEOUT", "2.5");
  EXPECT_DOUBLE_EQ(lt::config::real("LT_DIST_TIMEOUT"), 2.5);
  ScopedEnv e("LT_LLVM_PIPELINE", "");  // set but empty: kept (LLVM's O2)
  ASSERT_TRUE(lt::config::text("LT_LLVM_PIPELINE").has_value());
  EXPECT_EQ(*lt::config::text("LT_LLVM_PIPELINE"), "");
  ScopedEnv f("LT_CACHE_DIR", "/tmp/x");
  EXPECT_EQ(lt::environment("LT_CACHE_DIR").value_or(""), "/tmp/x");
}

TEST(Config, MalformedValuesAreErrorsNamingTheVariable) {
  struct Case {
    const char* name;
    const char* value;
    std::function<void()> read;
    const char* expect;
  };
  const Case cases[] = {
      {"LT_NUM_THREADS", "abc", [] { lt::config::integer("LT_NUM_THREADS"); }, "expected an integer"},
      {"LT_NUM_THREADS", "0", [] { lt::config::integer("LT_NUM_THREADS"); }, "from 1 to 4096"},
      {"LT_CACHE_SIZE", "-3", [] { lt::config::integer("LT_CACHE_SIZE"); }, "of at least 1"},
      {"LT_CACHE_SIZE", "12x", [] { lt::config::integer("LT_CACHE_SIZE"); }, "expected an integer"},
      {"LT_LLVM_OPT", "4", [] { lt::config::integer("LT_LLVM_OPT"); }, "from 0 to 3"},
      {"LT_DIST_TIMEOUT", "soon", [] { lt::config::real("LT_DIST_TIMEOUT"); }, "expected a number"},
      {"LT_DIST_TIMEOUT", "nan", [] { lt::config::real("LT_DIST_TIMEOUT"); }, "expected a number"},
      {"LT_DEBUG", "maybe", [] { lt::config::flag("LT_DEBUG"); }, "expected 0 or 1"},
      {"LT_BACKEND", "xla", [] { lt::config::choice("LT_BACKEND"); }, "expected one of mlir|interp"},
      {"LT_MLIR_MATMUL", "fast", [] { lt::config::choice("LT_MLIR_MATMUL"); },
       "expected one of measure|blas|codegen"},
      {"MASTER_PORT", "70000", [] { lt::config::integer("MASTER_PORT"); }, "from 0 to 65535"},
  };
  for (const Case& c : cases) {
    ScopedEnv e(c.name, c.value);
    const std::string msg = error_of(c.read);
    EXPECT_NE(msg.find(std::string(c.name) + "=" + c.value), std::string::npos)
        << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": " << msg;
  }
  EXPECT_NE(error_of([] { lt::config::integer("LT_NO_SUCH_VARIABLE"); }).find("not in the config table"),
            std::string::npos);
  EXPECT_NE(error_of([] { lt::environment("LT_NO_SUCH_VARIABLE"); }).find("LT_NO_SUCH_VARIABLE"),
            std::string::npos);
}

// A malformed value of a variable the library reads while loading (LT_NUM_THREADS, LT_METRICS)
// exits with status 2 and the message, instead of an uncaught exception.
TEST(Config, MalformedValueAtLoadExitsWithTheMessage) {
  const std::string cmd = "LT_NUM_THREADS=abc /proc/" + std::to_string(getpid()) +
                          "/exe --gtest_filter=Config.DefaultsWhenUnsetOrEmpty 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << out;
  EXPECT_NE(out.find("lazytensor: LT_NUM_THREADS=abc: expected an integer"), std::string::npos)
      << out;
}

TEST(Config, HelpTableListsEveryVariableTheLibraryReads) {
  const std::string t = lt::environment_help();
  for (const char* name : {"LT_BACKEND", "LT_NUM_THREADS", "LT_DEBUG", "LT_CACHE_DIR",
                           "LT_CPU_FEATURES", "LT_MLIR_MATMUL", "LT_DIST_TOKEN", "MASTER_PORT"})
    EXPECT_NE(t.find(std::string("`") + name + "`"), std::string::npos) << name;
  EXPECT_EQ(t.rfind("| variable | type | default | meaning |", 0), 0u);
}

}  // namespace
