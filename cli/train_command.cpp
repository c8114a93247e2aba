#include "cli/train_command.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "cli/rank_result_wire.hpp"
#include "cli/wire.hpp"
#include "collectives/cluster.hpp"
#include "collectives/launcher.hpp"
#include "comm/errors.hpp"
#include "model/parallel_step.hpp"
#include "model/training.hpp"
#include "traces/output_file.hpp"
#include "cli/run_diagnosis.hpp"
#include "cli/schedule_dry_run.hpp"
#include "cli/train_progress.hpp"
#include "cli/train_memory.hpp"
#include "cli/train_steps.hpp"
#include "model/schedule_builders.hpp"
#include "traces/hash.hpp"
#include "traces/jsonl.hpp"
#include "traces/sink.hpp"

namespace ranklab::cli {

namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A flag next to --init-from must agree with the set, which decides layout and shape.
template <typename T, typename U>
void check_agrees(const char* flag, const std::optional<T>& given, U value, const char* key,
                  const std::filesystem::path& dir) {
  if (given && static_cast<std::int64_t>(*given) != static_cast<std::int64_t>(value)) {
    throw UsageError(
        fmt::format("{} {} conflicts with {}={} in {} (--init-from takes the layout "
                    "and shape from the set)",
                    flag, *given, key, value, (dir / "manifest.json").string()));
  }
}

// Layout, shape, seed and dtype from a golden set's manifest; flags may only repeat them.
void apply_golden(const TrainFlags& f, ParallelConfig& requested, ModelShape& shape,
                  TrainSpec& spec) {
  const std::filesystem::path dir = f.init_from;
  const GoldenInfo info = read_golden_info(dir);
  const GoldenConfig& g = info.config;
  check_agrees("--tp", f.tp, g.tp, "tp", dir);
  check_agrees("--pp", f.pp, g.pp, "pp", dir);
  check_agrees("--dp", f.dp, g.dp, "dp", dir);
  check_agrees("--batch", f.batch, g.shape.batch, "batch", dir);
  check_agrees("--seq", f.seq, g.shape.seq, "seq", dir);
  check_agrees("--hidden", f.hidden, g.shape.hidden, "hidden", dir);
  check_agrees("--inter", f.inter, g.shape.inter, "inter", dir);
  check_agrees("--layers", f.layers, g.shape.layers, "layers", dir);
  check_agrees("--seed", f.seed, g.seed, "seed", dir);
  requested.tp = g.tp;
  requested.pp = g.pp;
  requested.dp = g.dp;
  shape = g.shape;
  spec.seed = g.seed;
  spec.init_from = dir;
  spec.dtype = f.dtype ? parse_train_dtype(*f.dtype)
                      : info.has_float32 ? DataType::f32 : DataType::f64;
  if (!(spec.dtype == DataType::f64 ? info.has_float64 : info.has_float32)) {
    throw UsageError(fmt::format("{} holds no {} data", (dir / "manifest.json").string(),
                                 long_name(spec.dtype)));
  }
}

// Every rank's coordinates, layers and group names, before any check.
std::vector<RankRow> layout_rows(const TrainSpec& spec) {
  std::vector<RankRow> rows;
  for (int rank = 0; rank < spec.layout.world_size(); ++rank) {
    RankRow row{.rank = rank, .coords = spec.layout.coords_of(rank)};
    row.layers = stage_layer_indices(spec.shape.layers, spec.layout.pp, spec.step.virtual_stages,
                                     row.coords.p);
    for (const GroupKind kind : kGroupKinds) {
      row.groups[static_cast<std::size_t>(kind)] =
          group_name(kind, spec.layout.group_ranks(kind, rank));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

template <typename Scalar>
struct JobData {
  Problem<Scalar> problem;  ///< the part the mode trains
  std::optional<GoldenSet<Scalar>> golden;
};

template <typename Scalar>
JobData<Scalar> load_job_data(const TrainSpec& spec) {
  JobData<Scalar> data;
  Problem<Scalar> full;
  if (spec.init_from.empty()) {
    full = make_problem<Scalar>(spec.shape, spec.layout.dp, spec.seed);
  } else {
    data.golden = load_golden<Scalar>(spec.init_from);
    full = problem_from_golden(*data.golden);
  }
  data.problem = mode_problem(spec.mode, spec.layout, full);
  return data;
}

// The trace header's config of the main job `spec` run with `algorithm` on `device`.
nlohmann::json train_trace_config(const TrainSpec& spec, Algorithm algorithm, DeviceKind device) {
  const ModelShape& s = spec.shape;
  nlohmann::json config = {{"program", "train"},   {"mode", to_string(spec.mode)},
                           {"tp", spec.layout.tp}, {"pp", spec.layout.pp},
                           {"dp", spec.layout.dp}, {"order", to_string(spec.layout.order)},
                           {"batch", s.batch},     {"seq", s.seq},
                           {"hidden", s.hidden},   {"inter", s.inter},
                           {"layers", s.layers},   {"dtype", long_name(spec.dtype)},
                           {"seed", spec.seed},    {"algorithm", to_string(algorithm)}};
  // The seed's step keeps the seed's header, byte for byte; other steps name theirs.
  if (!spec.step.is_seed()) {
    config["schedule"] = to_string(spec.step.schedule);
    config["microbatches"] = spec.step.microbatches;
    config["virtual_stages"] = spec.step.virtual_stages;
    config["tp_comm"] = to_string(spec.step.tp_comm);
  }
  if (spec.multi_step()) {
    config["steps"] = spec.training.steps;
    config["lr"] = *spec.training.lr;
  }
  // The default device keeps the header as it was; another names itself.
  if (device != DeviceKind::cpu) config["device"] = to_string(device);
  return config;
}

// The main job's rank program, the same on every launcher: the rank's steps, then its
// result and (with --steps > 1) its per-step checks as bytes, for the reporting process.
// `checks` (null for one step) sees every rank's every step, `progress` (null: none drawn)
// every rank's every pass.
template <typename Scalar>
std::string train_rank(Communicator& world, const TrainSpec& spec, const Problem<Scalar>& problem,
                       TrainingChecks<Scalar>* checks, TrainingProgress* progress) {
  // Each rank writes only its own records, so threads never share one.
  const StepObserver<Scalar> observe =
      checks != nullptr ? checks->observer(world.rank()) : StepObserver<Scalar>{};
  const PassObserver after_pass = progress != nullptr ? progress->observer() : PassObserver{};
  const RankResult<Scalar> result = run_training_rank<Scalar>(
      world, spec.layout, problem, spec.step, spec.training, observe, after_pass);
  wire::Writer out;
  out.bytes(encode_rank_result(result));
  out.bytes(checks != nullptr ? checks->encode_rank(world.rank()) : std::string());
  return out.take();
}

// Every rank's result from the run's gathered bytes; the per-step checks go to `checks`.
template <typename Scalar>
std::vector<RankResult<Scalar>> take_rank_results(const std::vector<std::string>& gathered,
                                                  TrainingChecks<Scalar>* checks) {
  std::vector<RankResult<Scalar>> results;
  results.reserve(gathered.size());
  for (std::size_t rank = 0; rank < gathered.size(); ++rank) {
    wire::Reader in(gathered[rank], "a rank's results");
    results.push_back(decode_rank_result<Scalar>(in.bytes()));
    const std::string step_checks = in.bytes();
    in.expect_end();
    if (checks != nullptr) checks->decode_rank(static_cast<int>(rank), step_checks);
  }
  return results;
}

// Per rank: the dense reference, and the golden set's gradients where it has this layout.
// With --steps > 1, `weights` and `reference` are the last step's (the checks of every
// step came from TrainingChecks), and the golden set, which holds the first step, is
// compared there.
template <typename Scalar>
void fill_checks(TrainReport& report, const JobData<Scalar>& data,
                 const std::vector<LayerParams<Scalar>>& weights,
                 const DenseReference<Scalar>& reference,
                 const std::vector<RankResult<Scalar>>& results) {
  const bool compare_golden =
      data.golden && report.spec.mode == ParallelMode::hybrid && !report.spec.multi_step();
  for (const RankResult<Scalar>& result : results) {
    if (!report.spec.multi_step()) {
      RankCheck check = check_rank(result, report.spec.layout, reference);
      if (compare_golden) check.golden = compare_rank_with_golden(result, *data.golden);
      report.ranks[static_cast<std::size_t>(result.rank)].check = check;
    }
    if (!result.loss || result.coords.t != 0) continue;
    const auto d = static_cast<std::size_t>(result.coords.d);
    ReplicaLoss loss{.replica = result.coords.d,
                     .loss = static_cast<double>(*result.loss),
                     .dense = static_cast<double>(reference.result.replicas[d].loss)};
    if (compare_golden && d < data.golden->hybrid_losses.size()) {
      loss.golden = static_cast<double>(data.golden->hybrid_losses[d]);
    }
    report.losses.push_back(loss);
  }
  std::sort(report.losses.begin(), report.losses.end(),
            [](const ReplicaLoss& a, const ReplicaLoss& b) { return a.replica < b.replica; });
  if (!report.spec.save.empty()) {
    Problem<Scalar> saved = data.problem;
    saved.layers = weights;
    save_golden(report.spec.save, make_golden_set(saved, report.spec.layout, reference, results));
    report.saved_to = report.spec.save.string();
  }
}

// Every rank's output, loss and gradients, bit for bit, as one hash: what explore compares
// between schedules (DESIGN.md §5: any policy, bitwise-identical results).
template <typename Scalar>
std::string results_digest(const std::vector<RankResult<Scalar>>& results) {
  std::vector<std::byte> bytes;
  const auto add = [&bytes](const auto& dense) {
    const auto* first = reinterpret_cast<const std::byte*>(dense.data());
    bytes.insert(bytes.end(), first, first + dense.size() * sizeof(Scalar));
  };
  for (const RankResult<Scalar>& r : results) {
    add(r.output);
    if (r.loss) add(Eigen::Matrix<Scalar, 1, 1>(*r.loss));
    for (const LayerGrads<Scalar>& g : r.grads) {
      add(g.w1);
      add(g.b1);
      add(g.w2);
      add(g.b2);
    }
  }
  return "results " + format_hash(payload_hash(bytes));
}

void fill_traffic(TrainReport& report, const Trace& trace, bool direct, std::size_t elem_bytes) {
  const std::vector<RankTraffic> counted = count_traffic(trace);
  const ParallelConfig& layout = report.spec.layout;
  for (const GroupKind kind : kGroupKinds) {
    const auto k = static_cast<std::size_t>(kind);
    report.traffic[k] = total_traffic(counted, kind);
    report.group_counts[k] = layout.all_groups(kind).size();
  }
  // The pipeline's messages per stage, summed over the stage's ranks.
  PipelineReport& pipeline = report.pipeline;
  pipeline.traced_messages.assign(static_cast<std::size_t>(layout.pp), 0);
  pipeline.ranks_per_stage = layout.tp * layout.dp;
  for (std::size_t rank = 0; rank < counted.size(); ++rank) {
    const KindTraffic& pp = counted[rank][GroupKind::pp];
    pipeline
        .traced_messages[static_cast<std::size_t>(layout.coords_of(static_cast<int>(rank)).p)] +=
        pp.send.count + pp.recv.count;
  }
  report.traffic_checked = direct;
  if (!direct) return;
  const std::string step =
      report.spec.multi_step()
          ? fmt::format("{} steps", report.spec.training.steps)
          : (report.spec.step.is_seed() ? "the seed's step" : "the step");
  for (std::size_t rank = 0; rank < counted.size(); ++rank) {
    const RankTraffic one = expected_traffic(layout, report.spec.shape, elem_bytes,
                                             static_cast<int>(rank), report.spec.step);
    RankTraffic expected = one;
    for (int s = 1; s < report.spec.training.steps; ++s) {
      for (const GroupKind kind : kGroupKinds) expected[kind] += one[kind];
    }
    for (const GroupKind kind : kGroupKinds) {
      const OpTally got = counted[rank][kind].total();
      const OpTally want = expected[kind].total();
      if (!(counted[rank][kind] == expected[kind])) {
        report.traffic_mismatches.push_back(
            fmt::format("rank {} {}: {} ops / {} B, {} sends {} ops / {} B", rank, to_string(kind),
                        got.count, got.bytes, step, want.count, want.bytes));
      }
    }
  }
}

// The job prepared once: schedule validated, data loaded, dense reference computed.
template <typename Scalar>
class PreparedJob final : public TrainJob::Impl {
 public:
  PreparedJob(TrainSpec spec, const ClusterFlags& flags, std::optional<CostModel> cost)
      : Impl(std::move(spec), flags, std::move(cost)),
        // The schedule is validated before any rank runs it (the built-in ones always pass).
        schedule_(build_schedule(spec_.step.schedule_spec(spec_.layout.pp))),
        verdict_(validate_schedule(schedule_, emulator_dry_runner())) {
    if (!verdict_.ok()) throw ScheduleError(verdict_.problem);
    data_ = load_job_data<Scalar>(spec_);
    const auto start = Clock::now();
    reference_ = compute_dense_reference(data_.problem);
    dense_ms_ = elapsed_ms(start);
  }

  TrainRun run(Launcher& launcher, const TrainLaunch& launch) const override {
    TrainRun out;
    TrainReport& report = out.report;
    report = TrainReport{.spec = spec_, .ranks = layout_rows(spec_)};
    report.pipeline.schedule = schedule_;
    report.pipeline.verdict = verdict_;
    report.tolerance = relative_tolerance<Scalar>();
    report.cluster = launch.cluster;
    if (launch.before_run) launch.before_run(report);
    std::optional<TrainingChecks<Scalar>> checks;
    if (spec_.multi_step()) {
      checks.emplace(spec_, data_.problem, data_.golden ? &*data_.golden : nullptr,
                     launcher.local_ranks());
    }
    std::optional<TrainingProgress> passes;
    if (launch.progress) passes.emplace(spec_, schedule_);
    const LaunchOptions options{
        .algorithm = algorithm_,
        .record = true,
        .trace_config = train_trace_config(spec_, algorithm_, launcher.device())};
    Launched run = launcher.run_gathering(options, [&](Communicator& world) {
      return train_rank<Scalar>(world, spec_, data_.problem, checks ? &*checks : nullptr,
                                passes ? &*passes : nullptr);
    });
    if (passes) passes->finish();
    if (!run.has_results) {
      out.run = std::move(run.report);  // a process that does not report (MPI rank > 0)
      return out;
    }
    if (cost_) {
      const VirtualTimes times = time_trace(run.trace, *cost_, launch.send_mode);
      annotate(run.trace, times);
      report.virtual_time = format_virtual_times(times, *cost_);
      report.virtual_time_json = virtual_times_to_json(times, *cost_);
    }
    report.run_ms = run.ms;
    report.run = run.report;
    out.trace = std::move(run.trace);
    out.run = std::move(run.report);
    if (!out.run.ok()) return out;
    const std::vector<RankResult<Scalar>> results =
        take_rank_results<Scalar>(run.results, checks ? &*checks : nullptr);
    report.dense_ms = dense_ms_;
    if (data_.golden) report.dense_golden = compare_dense_with_golden(reference_, *data_.golden);
    if (checks) {
      checks->fill(report);
      report.dense_ms = checks->dense_ms();
      fill_checks(report, data_, checks->last().weights, checks->last().reference, results);
    } else {
      fill_checks(report, data_, data_.problem.layers, reference_, results);
    }
    fill_traffic(report, out.trace, algorithm_ == Algorithm::direct, sizeof(Scalar));
    out.results = results_digest(results);
    return out;
  }

 private:
  Schedule schedule_;
  ScheduleVerdict verdict_;
  JobData<Scalar> data_;
  DenseReference<Scalar> reference_;
  double dense_ms_ = 0.0;
};

}  // namespace

namespace {

// A single-dimension mode fixes the other degrees (and TP's layer count) to 1: a flag that
// asks for more would be silently ignored, so it is an error naming both flags.
void refuse_flags_the_mode_ignores(const TrainFlags& f, ParallelMode mode) {
  if (mode == ParallelMode::hybrid) return;
  const std::pair<const char*, std::optional<std::int64_t>> degrees[] = {
      {"--tp", mode == ParallelMode::tp ? std::nullopt : f.tp},
      {"--pp", mode == ParallelMode::pp ? std::nullopt : f.pp},
      {"--dp", mode == ParallelMode::dp ? std::nullopt : f.dp},
      {"--layers", mode == ParallelMode::tp ? f.layers : std::nullopt}};
  for (const auto& [flag, value] : degrees) {
    if (value && *value != 1) {
      throw UsageError(fmt::format("--mode {} runs with {} 1, got {} {} (use --mode hybrid)",
                                   to_string(mode), flag, flag, *value));
    }
  }
}

// --steps and --lr: one step keeps the seed's step (no update, so --lr would be ignored).
TrainingOptions resolve_training(const TrainFlags& f) {
  const int steps = f.steps.value_or(TrainingOptions{}.steps);
  if (steps < 1) {
    throw UsageError(fmt::format("--steps {}: a run trains at least 1 step", steps));
  }
  if (steps == 1) {
    if (f.lr) throw UsageError("--lr needs --steps > 1 (a single step applies no update)");
    return {};
  }
  const double lr = f.lr.value_or(kDefaultLearningRate);
  if (!std::isfinite(lr) || lr <= 0.0) {
    throw UsageError(fmt::format("--lr {}: the learning rate must be positive and finite", lr));
  }
  return {.steps = steps, .lr = lr};
}

}  // namespace

TrainSpec resolve_train_spec(const TrainFlags& f, std::optional<int> world) {
  TrainSpec spec;
  if (f.mode) spec.mode = parse_parallel_mode(*f.mode);
  refuse_flags_the_mode_ignores(f, spec.mode);
  ParallelConfig requested = kMainJobLayout;
  if (f.order) requested.order = parse_rank_order(*f.order);
  ModelShape shape;
  if (!f.init_from.empty()) {
    apply_golden(f, requested, shape, spec);
  } else {
    requested.tp = f.tp.value_or(requested.tp);
    requested.pp = f.pp.value_or(requested.pp);
    requested.dp = f.dp.value_or(requested.dp);
    shape = {.batch = f.batch.value_or(shape.batch),
             .seq = f.seq.value_or(shape.seq),
             .hidden = f.hidden.value_or(shape.hidden),
             .inter = f.inter.value_or(shape.inter),
             .layers = f.layers.value_or(shape.layers)};
    spec.seed = f.seed.value_or(spec.seed);
    if (f.dtype) spec.dtype = parse_train_dtype(*f.dtype);
  }
  shape.validate();
  requested.validate();
  spec.layout = mode_config(spec.mode, requested);
  spec.shape = mode_shape(spec.mode, shape);
  spec.layout.validate(spec.shape);
  if (world && *world != spec.layout.world_size()) {
    throw UsageError(fmt::format("--world {} does not match mode {}: {} needs {} ranks", *world,
                                 to_string(spec.mode), spec.layout.describe(),
                                 spec.layout.world_size()));
  }
  spec.save = f.save;
  if (f.schedule) spec.step.schedule = parse_schedule_kind(*f.schedule);
  spec.step.microbatches = f.microbatches.value_or(spec.step.microbatches);
  spec.step.virtual_stages = f.virtual_stages.value_or(spec.step.virtual_stages);
  if (f.tp_comm) spec.step.tp_comm = parse_tp_comm(*f.tp_comm);
  spec.step.validate(spec.layout, spec.shape);
  spec.training = resolve_training(f);
  return spec;
}

TrainJob::Impl::Impl(TrainSpec spec, const ClusterFlags& flags, std::optional<CostModel> cost)
    : spec_(std::move(spec)),
      options_(to_cluster_options(flags, spec_.layout.world_size())),
      algorithm_(to_algorithm(flags)),
      cost_(std::move(cost)) {}

TrainJob::TrainJob(const ClusterFlags& cluster, const TrainFlags& flags, std::optional<int> world,
                   const CostFlags& cost_flags) {
  TrainSpec spec = resolve_train_spec(flags, world);
  check_train_memory(spec, flags.max_memory_mib.value_or(0));
  std::optional<CostModel> cost = to_cost_model(cost_flags);
  if (cost) check_slowed_ranks(*cost, spec.layout.world_size());
  if (spec.dtype == DataType::f64) {
    impl_ = std::make_unique<PreparedJob<double>>(std::move(spec), cluster, std::move(cost));
  } else {
    impl_ = std::make_unique<PreparedJob<float>>(std::move(spec), cluster, std::move(cost));
  }
}

TrainJob::~TrainJob() = default;

TrainRun TrainJob::run(ClusterOptions options, bool progress) const {
  TrainLaunch launch{.cluster = fmt::format("policy {}, threads {}, send mode {}, algorithm {}",
                                            options.policy.to_string(), options.threads,
                                            options.send_mode.to_string(),
                                            to_string(impl_->algorithm())),
                     .send_mode = options.send_mode,
                     .progress = progress};
  if (options.device != DeviceKind::cpu) {
    launch.cluster += fmt::format(", device {} (communication staged through host buffers)",
                                  to_string(options.device));
  }
  const ParallelConfig& layout = spec().layout;
  spdlog::info("starting {} ranks: {}", layout.world_size(), layout.describe());
  EmulatorLauncher launcher(std::move(options));
  TrainRun run = impl_->run(launcher, launch);
  spdlog::info("run ended: {}", to_string(run.run.status));
  return run;
}

int train_command(const ClusterFlags& cluster, const TrainFlags& flags, std::optional<int> world,
                  const CostFlags& cost_flags) {
  // The main job writes its trace unless told not to; an explicit --trace was checked with
  // the other flags, the default path is checked here, before the run, like it.
  const bool default_trace = cluster.trace_path.empty() && !cluster.no_trace;
  if (default_trace) require_writable_output(kMainTrace, "the trace");
  const TrainJob job(cluster, flags, world, cost_flags);
  TrainRun run = job.run(job.options(), /*progress=*/true);
  if (!cluster.no_trace) {
    run.report.trace_path = default_trace ? kMainTrace : cluster.trace_path;
    write_trace_creating_folders(run.report.trace_path, run.trace);
  }
  write_wait_graph(cluster.wait_graph_path, run.run);
  if (flags.json) {
    std::cout << to_json(run.report).dump(2) << "\n";
  } else {
    print_text(std::cout, run.report);
  }
  return run.report.exit_code();
}

}  // namespace ranklab::cli
