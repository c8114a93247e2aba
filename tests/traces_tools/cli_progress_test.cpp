// Progress on stderr (traces/progress.hpp): drawn when stderr is a terminal (a pseudo-terminal
// here), never when it is a pipe or a file. RANKLAB_PROGRESS_DELAY_MS=0 draws at once, so
// the small example traces show it.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "tests/traces_tools/run_command.hpp"
#include "tests/traces_tools/tools_support.hpp"

namespace ranklab {
namespace {

using tools_testing::examples_dir;
using tools_testing::shell_quoted;

/// Runs ranklab with `args`, stderr on a pseudo-terminal, stdout to /dev/null; what the
/// terminal received.
std::string stderr_on_terminal(const std::vector<std::string>& args) {
  int master = -1;
  int slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return "openpty failed";
  const pid_t child = fork();
  if (child == 0) {
    dup2(slave, STDERR_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    close(master);
    setenv("RANKLAB_PROGRESS_DELAY_MS", "0", 1);
    std::vector<char*> argv{const_cast<char*>(RANKLAB_BINARY)};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(RANKLAB_BINARY, argv.data());
    _exit(127);
  }
  close(slave);
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(master, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has closed the terminal
    }
  }
  close(master);
  int status = 0;
  waitpid(child, &status, 0);
  return out;
}

//! On a terminal: a line redrawn in place ("\r...\033[K") naming the task, erased at the end.
TEST(CliProgressTest, DrawnOnATerminal) {
  const std::string trace = (examples_dir() / "seed_step_w8.jsonl").string();
  const std::string reading = stderr_on_terminal({"stats", trace});
  EXPECT_NE(reading.find("\rreading " + trace + ": "), std::string::npos) << reading;
  EXPECT_NE(reading.find("% ("), std::string::npos) << reading;
  EXPECT_NE(reading.rfind("\r\033[K"), std::string::npos) << reading;
  const std::string replaying = stderr_on_terminal({"replay", trace});
  EXPECT_NE(replaying.find("\rreplaying: "), std::string::npos) << replaying;
  EXPECT_NE(replaying.find(" operations), "), std::string::npos) << replaying;
}

//! A training run counts its compute passes, the forward or backward of one micro-batch
//! through one chunk on one rank (RANKLAB_PROGRESS_DELAY_MS=0 stands for a run of more
//! than two seconds), and erases the line before its report. A single step shows them too:
//! a long one (a big --hidden) is not silent to its end.
TEST(CliProgressTest, TrainingPassesOnATerminal) {
  // The seed's schedule: each of the 8 ranks runs one forward and one backward a step.
  const std::string training = stderr_on_terminal({"run", "--steps", "20", "--no-trace"});
  EXPECT_NE(training.find("\rtraining 20 steps: "), std::string::npos) << training;
  EXPECT_NE(training.find(" of 320 passes), "), std::string::npos) << training;
  EXPECT_NE(training.rfind("\r\033[K"), std::string::npos) << training;
  const std::string one = stderr_on_terminal({"run", "--no-trace"});
  EXPECT_NE(one.find("\rtraining: "), std::string::npos) << one;
  EXPECT_NE(one.find(" of 16 passes), "), std::string::npos) << one;
  EXPECT_NE(one.rfind("\r\033[K"), std::string::npos) << one;
  // 1F1B with 4 micro-batches: 8 passes a step on each rank of both stages.
  const std::string pipelined = stderr_on_terminal(
      {"run", "--schedule", "1f1b", "--microbatches", "4", "--no-trace"});
  EXPECT_NE(pipelined.find(" of 64 passes), "), std::string::npos) << pipelined;
}

//! In a file or a pipe: nothing of it, whatever the delay.
TEST(CliProgressTest, NeverInAPipeOrAFile) {
  const std::string trace = shell_quoted(examples_dir() / "seed_step_w8.jsonl");
  const std::string ranklab = std::string("RANKLAB_PROGRESS_DELAY_MS=0 '") + RANKLAB_BINARY + "' ";
  for (const std::string& args :
       {"stats " + trace, "replay " + trace, "diff " + trace + " " + trace,
        "export " + trace + " --perfetto /dev/null"}) {
    const auto in_file = tools_testing::run_command(ranklab + args);
    const auto in_pipe = tools_testing::run_command(ranklab + args + " 2>&1 | cat");
    for (const std::string& err : {in_file.err, in_pipe.out}) {
      EXPECT_EQ(err.find('\r'), std::string::npos) << args << ": " << err;
      EXPECT_EQ(err.find("% ("), std::string::npos) << args << ": " << err;
    }
    EXPECT_FALSE(in_file.out.empty()) << args;  // the report itself is there
  }
  const std::string training = ranklab + "run --steps 20 --no-trace";
  const auto in_file = tools_testing::run_command(training);
  const auto in_pipe = tools_testing::run_command(training + " 2>&1 | cat");
  for (const std::string& err : {in_file.err, in_pipe.out}) {
    EXPECT_EQ(err.find('\r'), std::string::npos) << err;
    EXPECT_EQ(err.find("passes), "), std::string::npos) << err;
  }
  EXPECT_NE(in_file.out.find("training: 20 steps of SGD"), std::string::npos) << in_file.out;
}

}  // namespace
}  // namespace ranklab
