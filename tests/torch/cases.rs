//! The tests of `tests/torch.rs`, built with the `tch` feature.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use nnbench::store::Format;
use nnbench::torch::tch::{CModule, Device, Kind, Tensor};
use nnbench::torch::{NamedTensors, Safetensors, SharedTensor, TorchScript};
use nnbench::{Memo, Runner, torch};

/// The memo cache is one per process: tests that read its figures or
/// memory take turns.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `rows × 50` floats counting up from 0, persisted as safetensors.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Weights {
    rows: i64,
}

static WEIGHT_COMPUTES: AtomicUsize = AtomicUsize::new(0);

impl Memo for Weights {
    type Value = SharedTensor;
    fn compute(&self) -> nnbench::Result<SharedTensor> {
        WEIGHT_COMPUTES.fetch_add(1, Ordering::SeqCst);
        let n = self.rows * 50;
        Ok(Tensor::arange(n, (Kind::Float, Device::Cpu))
            .reshape([self.rows, 50])
            .into())
    }
    fn size_of(&self, value: &SharedTensor) -> Option<u64> {
        Some(value.host_bytes())
    }
    fn store(&self) -> Option<Box<dyn Format<SharedTensor>>> {
        Some(Box::new(Safetensors::on(Device::Cpu)))
    }
}

#[nnbench::product(weights = [Weights { rows: 100 }])]
fn tensor_sum(weights: &SharedTensor) -> f64 {
    weights.sum(Kind::Double).double_value(&[])
}

/// A linear model `y = 3x + 1` fitted by gradient descent, its weights
/// persisted: a trained-model memo.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Fitted {
    steps: u32,
}

static FITS: AtomicUsize = AtomicUsize::new(0);

impl Memo for Fitted {
    type Value = NamedTensors;
    fn compute(&self) -> nnbench::Result<NamedTensors> {
        use nnbench::torch::tch::nn::{self, Module, OptimizerConfig};
        FITS.fetch_add(1, Ordering::SeqCst);
        nnbench::torch::tch::manual_seed(0);
        let vs = nn::VarStore::new(Device::Cpu);
        let line = nn::linear(vs.root() / "line", 1, 1, Default::default());
        let mut sgd = nn::Sgd::default().build(&vs, 0.1)?;
        let x = Tensor::arange(16, (Kind::Float, Device::Cpu)).view([16, 1]) / 16.0;
        let y = &x * 3.0 + 1.0;
        for _ in 0..self.steps {
            sgd.backward_step(
                &line
                    .forward(&x)
                    .mse_loss(&y, nnbench::torch::tch::Reduction::Mean),
            );
        }
        Ok(NamedTensors::new(
            vs.variables()
                .into_iter()
                .map(|(name, t)| (name, t.detach().copy()))
                .collect(),
        ))
    }
    fn size_of(&self, value: &NamedTensors) -> Option<u64> {
        Some(value.host_bytes())
    }
    fn store(&self) -> Option<Box<dyn Format<NamedTensors>>> {
        Some(Box::new(Safetensors::on(Device::Cpu)))
    }
}

#[nnbench::product(model = [Fitted { steps: 500 }])]
fn fitted_slope(model: &NamedTensors) -> f64 {
    model
        .get("line.weight")
        .map_or(f64::NAN, |w| w.double_value(&[0, 0]))
}

/// A TorchScript module holding a 4096 × 4096 matrix (64 MiB), traced
/// from Rust and saved where [`script_path`] says.
fn script_path() -> PathBuf {
    std::env::temp_dir().join(format!("nnbench-scaled-{}.pt", std::process::id()))
}

fn save_script(path: &Path) {
    let weights = Tensor::ones([4096, 4096], (Kind::Float, Device::Cpu)) * 0.5;
    let input = Tensor::ones([1, 4096], (Kind::Float, Device::Cpu));
    let module = CModule::create_by_tracing("Scaled", "forward", &[input], &mut |xs| {
        vec![xs[0].matmul(&weights)]
    })
    .expect("traced");
    module.save(path).expect("saved");
}

#[nnbench::product(model = [TorchScript::new(script_path(), Device::Cpu)])]
fn scripted(model: &CModule) -> nnbench::Result<f64> {
    let input = Tensor::ones([1, 4096], (Kind::Float, Device::Cpu));
    Ok(model
        .forward_ts(&[input])?
        .sum(Kind::Double)
        .double_value(&[]))
}

#[nnbench::benchmark(timing = once)]
fn torch_matmul() -> f64 {
    let a = Tensor::ones([64, 64], (Kind::Float, Device::Cpu));
    a.matmul(&a).sum(Kind::Double).double_value(&[])
}

#[test]
fn a_tensor_benchmark_runs_and_records_its_value() {
    let record = Runner::new()
        .filter("torch_matmul")
        .quiet(true)
        .run()
        .expect("run");
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    assert_eq!(case.value, serde_json::json!(64.0 * 64.0 * 64.0));
    if torch::accelerator().is_err() {
        assert_ne!(
            case.memory.gpu_method,
            Some(nnbench::record::GpuMethod::TorchAllocator)
        );
        assert_eq!(case.memory.gpu_reserved_peak_bytes, None);
    }
}

#[test]
fn the_allocator_answers_for_the_devices_there_are_and_nothing_aborts() {
    let devices = match torch::accelerator() {
        Ok(accelerator) => {
            assert!(accelerator.devices > 0, "{accelerator:?}");
            torch::empty_cache().expect("an accelerator's cache can be emptied");
            accelerator.devices
        }
        Err(why) => {
            let why = why.to_string();
            assert!(why.contains("no accelerator"), "{why}");
            assert!(torch::empty_cache().is_err());
            0
        }
    };
    for device in [0, 1, 1000] {
        match torch::device_memory(device) {
            Ok(memory) => {
                assert!(device < devices, "device {device} of {devices}: {memory:?}");
                assert!(
                    memory.reserved_bytes >= memory.allocated_bytes,
                    "{memory:?}"
                );
            }
            Err(err) => {
                assert!(device >= devices, "device {device} of {devices}: {err}");
                assert!(err.to_string().contains("unavailable"), "{err}");
            }
        }
    }
    torch::synchronize();
}

#[test]
fn a_tensor_memo_counts_its_exact_bytes() {
    let _turn = one_at_a_time();
    let weights = Weights { rows: 7 };
    let value = nnbench::memo::resolve(&weights).expect("computed");
    assert_eq!(value.bytes(), 7 * 50 * 4);
    let held = nnbench::memo::stats_by_type()
        .into_iter()
        .find(|t| t.type_name.ends_with("::Weights"))
        .expect("its type is in the cache");
    assert_eq!(held.stats.resident_bytes, 7 * 50 * 4);
    assert!(nnbench::memo::evict(&weights));
}

#[test]
fn a_tensor_memo_persists_as_safetensors_and_a_damaged_entry_is_recomputed() {
    let _turn = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        Runner::new()
            .filter("tensor_sum/")
            .quiet(true)
            .test_mode(true)
            .disk_tier(nnbench::memo::DiskTier::At(dir.path().into()))
            .run()
            .expect("run")
    };
    let expected = serde_json::json!((0..5000).sum::<i64>() as f64);
    let before = WEIGHT_COMPUTES.load(Ordering::SeqCst);
    let first = run();
    assert_eq!(first.cases[0].value, expected);
    let second = run();
    assert_eq!(second.cases[0].value, expected);
    assert_eq!(
        second.cases[0].memo.disk_hits, 1,
        "{:?}",
        second.cases[0].memo
    );
    assert_eq!(WEIGHT_COMPUTES.load(Ordering::SeqCst), before + 1);

    let entry = walk(dir.path())
        .into_iter()
        .find(|p| std::fs::read(p).is_ok_and(|b| String::from_utf8_lossy(&b).contains("rows: 100")))
        .expect("the memo's entry");
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&entry, bytes).unwrap();
    let third = run();
    assert_eq!(third.cases[0].value, expected);
    assert_eq!(WEIGHT_COMPUTES.load(Ordering::SeqCst), before + 2);
    assert!(
        !third.cases[0].warnings.is_empty(),
        "the damage is reported"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_torchscript_model_loads_evaluates_and_is_freed_when_evicted() {
    let _turn = one_at_a_time();
    let path = script_path();
    save_script(&path);
    let record = Runner::new()
        .filter("scripted/")
        .quiet(true)
        .test_mode(true)
        .disk_tier(nnbench::memo::DiskTier::Off)
        .run()
        .expect("run");
    let _ = std::fs::remove_file(&path);
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    assert_eq!(case.value, serde_json::json!(4096.0 * 4096.0 * 0.5));
    assert!(
        case.id
            .contains(&format!("nnbench-scaled-{}.pt@cpu", std::process::id())),
        "{}",
        case.id
    );
    assert_eq!(case.memo.evicted.len(), 1, "{:?}", case.memo);
    let memory = &case.memory;
    let freed = memory.rss_peak_bytes.unwrap() - memory.rss_after_bytes.unwrap();
    assert!(
        freed > 48 << 20,
        "64 MiB of weights freed on eviction, not {freed} bytes"
    );
    assert_eq!(case.memo.inputs.len(), 1, "the model file's fingerprint");
}

#[test]
fn a_missing_model_file_fails_its_case_naming_the_file() {
    let _turn = one_at_a_time();
    let missing = TorchScript::new("/nonexistent/model.pt", Device::Cpu);
    let err = format!("{:#}", nnbench::memo::resolve(&missing).unwrap_err());
    assert!(err.contains("/nonexistent/model.pt"), "{err}");
}

#[test]
fn a_trained_model_memo_persists_and_the_next_run_trains_nothing() {
    let _turn = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        Runner::new()
            .filter("fitted_slope/")
            .quiet(true)
            .test_mode(true)
            .disk_tier(nnbench::memo::DiskTier::At(dir.path().into()))
            .run()
            .expect("run")
    };
    let before = FITS.load(Ordering::SeqCst);
    let trained = run();
    let slope = trained.cases[0].value.as_f64().expect("a slope");
    assert!((slope - 3.0).abs() < 0.1, "fitted {slope}");
    let loaded = run();
    assert_eq!(FITS.load(Ordering::SeqCst), before + 1, "trained once");
    assert_eq!(loaded.cases[0].memo.disk_hits, 1);
    assert_eq!(
        loaded.cases[0].value, trained.cases[0].value,
        "the same weights"
    );
}

/// Set in the process that [`a_libtorch_cuda_that_does_not_load_is_named`]
/// starts, whose loader finds a broken `libtorch_cuda.so`.
const BROKEN_CUDA: &str = "NNBENCH_TEST_BROKEN_CUDA";

/// The folder of the `libtorch_cpu.so` this process loaded.
fn libtorch_lib() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    let cpu = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| path.ends_with("/libtorch_cpu.so"))
        .expect("libtorch_cpu.so is loaded");
    Path::new(cpu).parent().expect("a folder").to_owned()
}

/// A CUDA libtorch's `libtorch_cuda.so`, which nothing calls, is loaded
/// beside `libtorch_cpu.so` as the process starts; one that is there and
/// does not load is named, with the loader's reason, where the
/// accelerator is asked for, instead of CUDA going missing unexplained.
#[test]
fn a_libtorch_cuda_that_does_not_load_is_named() {
    if std::env::var_os(BROKEN_CUDA).is_some() {
        let why = torch::accelerator().unwrap_err().to_string();
        assert!(why.contains("libtorch_cuda.so did not load"), "{why}");
        assert!(why.contains("unavailable"), "{why}");
        return;
    }
    let lib = libtorch_lib();
    // libtorch's libraries through links in a folder of the test's own,
    // with a libtorch_cuda.so that is no library in place of the real one
    // of a CUDA libtorch.
    let dir = tempfile::tempdir().expect("a temporary folder");
    for entry in std::fs::read_dir(&lib)
        .expect("libtorch's lib folder")
        .flatten()
        .filter(|entry| entry.file_name() != "libtorch_cuda.so")
    {
        std::os::unix::fs::symlink(entry.path(), dir.path().join(entry.file_name()))
            .expect("a link");
    }
    std::fs::write(dir.path().join("libtorch_cuda.so"), b"not a library").expect("written");
    let path = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    let out = std::process::Command::new(std::env::current_exe().expect("this test"))
        .args([
            "cases::a_libtorch_cuda_that_does_not_load_is_named",
            "--exact",
            "--nocapture",
        ])
        .env(BROKEN_CUDA, "1")
        .env(
            "LD_LIBRARY_PATH",
            format!("{}:{path}", dir.path().display()),
        )
        .output()
        .expect("the test runs again");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}
