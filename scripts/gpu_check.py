"""The Python half of scripts/gpu-check.sh, run on the CUDA machine.

    gpu_check.py reference --out FILE   # the matmul timed by CUDA events, in PyTorch
    gpu_check.py judge OUT              # the checks, from the records under OUT

`judge` writes OUT/summary.json and OUT/summary.md, prints the summary,
and exits 1 when a check failed.
"""

import argparse
import json
import os
import sys
import time

MIB = 1 << 20


def reference(out):
    """The product of benches/gpu.rs's `matmul`, timed by CUDA events and
    by a host clock that does not wait for the device."""
    import torch

    n = 8192
    a, b = torch.randn(2, n, n, device="cuda").unbind(0)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    runs = 20
    events = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    event_ms = sorted(s.elapsed_time(e) for s, e in events)
    queued = []
    for _ in range(runs):
        torch.cuda.synchronize()
        started = time.perf_counter()
        a @ b
        queued.append(time.perf_counter() - started)
    torch.cuda.synchronize()
    result = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
        "n": n,
        "event_median_ns": event_ms[runs // 2] * 1e6,
        "event_min_ns": event_ms[0] * 1e6,
        "queued_median_ns": sorted(queued)[runs // 2] * 1e9,
        "tf32": torch.backends.cuda.matmul.allow_tf32,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


def load(out, name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def cases(record, family):
    return [c for c in (record or {}).get("cases", []) if c["family"] == family]


def param(case, name):
    return case.get("params", {}).get(name)


class Checks:
    def __init__(self):
        self.rows = []
        self.figures = {}

    def check(self, name, ok, detail):
        self.rows.append({"check": name, "ok": bool(ok), "detail": detail})

    def figure(self, name, value):
        self.figures[name] = value


def mib(b):
    return "null" if b is None else f"{b / MIB:.1f} MiB"


def ms(ns):
    return "null" if ns is None else f"{ns / 1e6:.3f} ms"


def within(measured, expected, rel=0.01, slack=2 * MIB):
    return measured is not None and abs(measured - expected) <= rel * expected + slack


def judge_alloc(c, out):
    record = load(out, "alloc")
    rows = cases(record, "alloc")
    c.check("alloc ran", len(rows) == 2 and all(r.get("error") is None for r in rows),
            f"{len(rows)} cases, errors: {[r.get('error') for r in rows if r.get('error')]}")
    fixture = 256 * MIB
    for r in rows:
        m = r.get("memory", {})
        size = param(r, "mib") * MIB
        c.figure(f"alloc {param(r, 'mib')} MiB", {k: m.get(k) for k in (
            "gpu_method", "gpu_peak_bytes", "call_gpu_peak_bytes", "gpu_reserved_peak_bytes",
            "memo_gpu_resident_bytes")})
        c.check(f"alloc {param(r, 'mib')} MiB: method is the allocator",
                m.get("gpu_method") == "torch-allocator", m.get("gpu_method"))
        c.check(f"alloc {param(r, 'mib')} MiB: gpu_peak_bytes = fixture + call within 1% + 2 MiB",
                within(m.get("gpu_peak_bytes"), fixture + size),
                f"{mib(m.get('gpu_peak_bytes'))} for {mib(fixture + size)}")
        c.check(f"alloc {param(r, 'mib')} MiB: call_gpu_peak_bytes leaves the fixture out",
                within(m.get("call_gpu_peak_bytes"), size),
                f"{mib(m.get('call_gpu_peak_bytes'))} for {mib(size)}")
        reserved = m.get("gpu_reserved_peak_bytes")
        c.check(f"alloc {param(r, 'mib')} MiB: reserved peak >= allocated peak",
                reserved is not None and m.get("gpu_peak_bytes") is not None
                and reserved >= m.get("gpu_peak_bytes"),
                f"{mib(reserved)} >= {mib(m.get('gpu_peak_bytes'))}")
    nvml = cases(load(out, "alloc-nvml"), "alloc")
    for r in nvml:
        m = r.get("memory", {})
        c.figure(f"alloc {param(r, 'mib')} MiB, NNBENCH_GPU=nvml", {k: m.get(k) for k in (
            "gpu_method", "gpu_peak_bytes", "call_gpu_peak_bytes")})
    allocator = {param(r, "mib"): r.get("memory", {}) for r in rows}
    c.check("NVML beside the allocator: process method, at least the allocator's reserved peak",
            len(nvml) == 2 and all(
                r.get("memory", {}).get("gpu_method") in ("process", "device_delta")
                and r.get("memory", {}).get("gpu_peak_bytes") is not None
                and param(r, "mib") in allocator
                and r.get("memory", {}).get("gpu_peak_bytes") >= (allocator[param(r, "mib")].get("gpu_reserved_peak_bytes") or 0)
                for r in nvml),
            "; ".join(f"{param(r, 'mib')} MiB: NVML {mib(r.get('memory', {}).get('gpu_peak_bytes'))} "
                      f"({r.get('memory', {}).get('gpu_method')}), call {mib(r.get('memory', {}).get('call_gpu_peak_bytes'))}"
                      for r in nvml))
    iso = cases(load(out, "alloc-isolate"), "alloc")
    c.check("--isolate with CUDA cases: same figures from workers",
            len(iso) == 2 and all(r.get("error") is None and within(
                r.get("memory", {}).get("call_gpu_peak_bytes"), param(r, "mib") * MIB) for r in iso),
            "; ".join(f"{param(r, 'mib')} MiB: peak {mib(r.get('memory', {}).get('gpu_peak_bytes'))}, "
                      f"call {mib(r.get('memory', {}).get('call_gpu_peak_bytes'))}, error {r.get('error')}" for r in iso))


def judge_matmul(c, out):
    ref = load(out, "reference") or {}
    c.figure("reference (PyTorch, CUDA events)", ref)
    rows = cases(load(out, "matmul"), "matmul")
    c.check("matmul ran", len(rows) == 1 and rows[0].get("error") is None,
            str([r.get("error") for r in rows]))
    if not rows or not ref:
        return
    t = rows[0].get("time", {})
    c.figure("matmul (nnbench)", {k: t.get(k) for k in (
        "mode", "samples", "iters", "median_ns", "min_ns", "cpu_median_ns",
        "process_cpu_median_ns", "percentiles", "used_device")})
    c.figure("matmul queued (host clock, no wait), s", rows[0].get("value"))
    event = ref["event_median_ns"]
    c.check("matmul: nnbench's median within 5% of CUDA events",
            abs(t.get("median_ns") - event) <= 0.05 * event,
            f"{ms(t['median_ns'])} against {ms(event)}")
    queued_ns = (rows[0].get("value") or 0) * 1e9
    c.check("matmul: without waiting it would be far shorter",
            queued_ns < 0.2 * t.get("median_ns"),
            f"queued in {ms(queued_ns)} (PyTorch {ms(ref.get('queued_median_ns'))}), "
            f"waited {ms(t['median_ns'])}")
    p = t.get("percentiles") or {}
    c.check("matmul: recorded as a call that used the device",
            t.get("used_device") is True, str(t.get("used_device")))
    c.check("matmul: percentiles wait for the device",
            p.get("p50_ns") is not None and abs(p["p50_ns"] - event) <= 0.05 * event,
            f"p50 {ms(p.get('p50_ns'))}, p99 {ms(p.get('p99_ns'))} against {ms(event)}")
    e = rows[0].get("energy") or {}
    c.figure("matmul energy", e)
    c.check("matmul: energy counted by NVML, at a power the device can draw",
            e.get("method") == "nvml" and (e.get("joules") or 0) > 0
            and 30 <= (e.get("watts") or 0) <= 1500,
            f"{e.get('joules')} J a call at {e.get('watts')} W ({e.get('reason') or e.get('method')})")
    paired = load(out, "matmul-paired")
    prow = cases(paired, "matmul")
    if prow and prow[0].get("paired"):
        pr = prow[0].get("paired")
        c.figure("matmul paired", {k: pr.get(k) for k in (
            "clock", "rounds", "estimate", "interval", "verdict", "wall_ratios", "cpu_ratios")})
        c.figure("matmul paired time", {k: prow[0].get("time", {}).get(k) for k in (
            "median_ns", "cpu_median_ns", "process_cpu_median_ns")})
        c.check("matmul paired against the same build passes",
                pr.get("verdict") != "regressed" and prow[0].get("error") is None,
                f"verdict {pr.get('verdict')}, clock {pr.get('clock')}, estimate {pr.get('estimate')}")
        c.check("matmul paired rounds wait for the device",
                abs(prow[0].get("time", {}).get("median_ns") - event) <= 0.10 * event,
                f"{ms(prow[0].get('time', {}).get('median_ns'))} against {ms(event)}")
    else:
        c.check("matmul paired ran", False, str(prow[0].get("error") if prow else "no record"))


def device_peak(out, step):
    """The device's peak used memory in bytes while `step` ran, from its
    nvidia-smi log; None without it."""
    path = os.path.join(out, step + ".smi")
    if not os.path.exists(path):
        return None
    values = []
    with open(path) as f:
        for line in f:
            try:
                values.append(float(line.strip()) * MIB)
            except ValueError:
                continue
    return max(values) if values else None


def judge_budget(c, out):
    free = cases(load(out, "pair"), "pair")
    budget = cases(load(out, "pair-budget"), "pair")
    for name, rows in (("no budget", free), ("--memo-gpu-budget 2.5GiB", budget)):
        c.figure(f"pair, {name}", {
            "cases": len(rows),
            "max live bytes in a call": max((r.get("value") or 0 for r in rows), default=None),
            "max reserved peak": max((r.get("memory", {}).get("gpu_reserved_peak_bytes") or 0 for r in rows), default=None),
            "evictions": sum(len(r.get("memo", {}).get("evicted", [])) for r in rows),
        })
    free_device = device_peak(out, "pair")
    budget_device = device_peak(out, "pair-budget")
    c.figure("pair: device used peak (nvidia-smi), no budget / budget",
             [mib(free_device), mib(budget_device)])
    c.check("pair ran with and without a budget",
            len(free) == 9 and len(budget) == 9 and all(r.get("error") is None for r in free + budget),
            f"{len(free)} and {len(budget)} cases")
    limit = 2.5 * 1024 * MIB
    worst = max((r.get("value") or 0 for r in budget), default=0)
    c.check("--memo-gpu-budget holds: live tensors in each call within 2.5 GiB",
            budget and worst <= limit, f"at most {mib(worst)}")
    c.check("--memo-gpu-budget shows in the device's used memory (nvidia-smi)",
            free_device is not None and budget_device is not None and budget_device < free_device,
            f"{mib(budget_device)} with the budget, {mib(free_device)} without")
    worst_reserved = max((r.get("memory", {}).get("gpu_reserved_peak_bytes") or 0 for r in budget), default=0)
    c.check("--memo-gpu-budget holds in the allocator's reserved memory",
            budget and worst_reserved <= limit + 64 * MIB, f"at most {mib(worst_reserved)}")


def judge_oom(c, out):
    record = load(out, "oom")
    rows = cases(record, "oom")
    others = cases(record, "alloc")
    message = (rows[0].get("error") or {}).get("message", "") if rows else ""
    c.check("an out-of-memory on the GPU fails that case, clearly",
            len(rows) == 1 and rows[0].get("error") is not None and "out of memory" in message.lower(),
            message[:300])
    c.check("the other cases of that run pass",
            len(others) == 2 and all(r.get("error") is None for r in others),
            str([r.get("error") for r in others]))


def judge_child(c, out):
    rows = cases(load(out, "child"), "child")
    if not rows:
        c.check("NVML alone reads a child's allocation", False, "no record")
        return
    m = rows[0].get("memory", {})
    c.figure("child (no tch, NVML)", {k: m.get(k) for k in (
        "gpu_method", "gpu_peak_bytes", "call_gpu_peak_bytes")})
    c.check("NVML alone (no tch) reads a Python torch process's 1 GiB",
            rows[0].get("error") is None and m.get("gpu_peak_bytes") is not None
            and m.get("gpu_peak_bytes") >= 1024 * MIB,
            f"{mib(m.get('gpu_peak_bytes'))} by {m.get('gpu_method')}, error {rows[0].get('error')}")


def judge_mnist(c, out):
    rows = cases(load(out, "mnist"), "classify")
    cuda = [r for r in rows if "cuda" in json.dumps(r.get("params", {}))]
    for r in rows:
        value = r.get("value") or {}
        c.figure(f"mnist {r['id']}", {
            "accuracy": value.get("accuracy"),
            "images_per_second": value.get("images_per_second"),
            "median_ns": r.get("time", {}).get("median_ns"),
            "gpu_peak_bytes": r.get("memory", {}).get("gpu_peak_bytes"),
            "call_gpu_peak_bytes": r.get("memory", {}).get("call_gpu_peak_bytes"),
            "error": r.get("error"),
        })
    c.check("mnist: CUDA cases beside the CPU cases",
            len(cuda) == 4 and len(rows) == 8 and all(r.get("error") is None for r in rows),
            f"{len(cuda)} CUDA of {len(rows)}")
    c.check("mnist: CUDA accuracy as on the CPU (above 80%), GPU peak recorded",
            cuda and all((r.get("value") or {}).get("accuracy", 0) > 0.8
                         and (r.get("memory", {}).get("gpu_peak_bytes") or 0) > 0 for r in cuda),
            "; ".join(f"{(r.get('value') or {}).get('accuracy')}, {mib(r.get('memory', {}).get('gpu_peak_bytes'))}" for r in cuda))
    def rates(r):
        recorded = (r.get("value") or {}).get("images_per_second") or 0
        return recorded, 10000 / (r.get("time", {}).get("median_ns") / 1e9)
    c.check("mnist: the recorded images/s is the warm passes' (within 25% of the median pass's)",
            rows and all(abs(a / b - 1) <= 0.25 for a, b in map(rates, rows)),
            "; ".join(f"{a:.0f} for {b:.0f}" for a, b in map(rates, rows)))
    paired = cases(load(out, "mnist-paired"), "classify")
    verdicts = [(r["id"], (r.get("paired") or {}).get("verdict"), (r.get("paired") or {}).get("clock"))
                for r in paired]
    c.figure("mnist paired", verdicts)
    c.check("mnist: the CUDA cases are judged by wall time",
            paired and all(clock == "wall" for _, _, clock in verdicts), str(verdicts))
    cpu = [r for r in rows if r not in cuda]
    c.check("mnist: the CPU cases have no GPU memory of their own",
            cpu and all(r.get("memory", {}).get("gpu_method") == "torch-allocator"
                        and r.get("memory", {}).get("call_gpu_peak_bytes") == 0 for r in cpu),
            "; ".join(f"{r.get('memory', {}).get('gpu_method')} {mib(r.get('memory', {}).get('call_gpu_peak_bytes'))}" for r in cpu))
    c.check("mnist: paired run of the CUDA cases against a copy passes",
            len(paired) == 4 and all(v in ("unchanged", "improved") for _, v, _ in verdicts)
            and all(r.get("error") is None for r in paired),
            str(verdicts))


# Each step of scripts/gpu-check.sh and the exit it must end with: the
# out-of-memory step fails its one case on purpose; every other step,
# paired runs of a build with its own copy included, passes whole (a gate
# that fails there is a false alarm, whatever the verdicts of time say).
STEP_EXITS = {
    "reference": 0, "alloc": 0, "alloc-nvml": 0, "alloc-isolate": 0, "matmul": 0,
    "matmul-paired": 0, "pair": 0, "pair-budget": 0, "oom": 1, "child": 0, "mnist": 0,
    "mnist-paired": 0,
}


def judge_steps(c, out):
    steps = c.figures.get("steps") or {}
    for name, expected in STEP_EXITS.items():
        ran = steps.get(name)
        log = os.path.join(out, name + ".log")
        tail = ""
        if ran and ran["exit"] != expected and os.path.exists(log):
            with open(log, errors="replace") as f:
                lines = [line.strip() for line in f if line.strip()]
            tail = f": {lines[-1][:300]}" if lines else ""
        c.check(f"step {name} exits {expected}", ran is not None and ran["exit"] == expected,
                "did not run" if ran is None else f"exit {ran['exit']} after {ran['seconds']} s{tail}")
    # A step of gpu-check.sh that this list does not name would pass
    # unjudged, whatever it did.
    for name in steps:
        if name not in STEP_EXITS:
            c.check(f"step {name} is judged", False,
                    "gpu-check.sh ran a step that STEP_EXITS does not name")


def figures_section(c, out):
    """The book's figures section (docs/src/figures.md, "On a GPU") from
    the figures of this check."""
    f = c.figures
    ref = f.get("reference (PyTorch, CUDA events)") or {}
    device = (f.get("device") or "").replace("\n", "; ")
    lines = [
        f"`scripts/gpu-check.sh` on {time.strftime('%Y-%m-%d')}: {device}; "
        f"PyTorch {ref.get('torch')} (CUDA {ref.get('cuda')}) in the machine's Python.",
        "",
        "| what | nnbench recorded | expected, or the reference |",
        "|---|---|---|",
    ]
    for size in (512, 64):
        a = f.get(f"alloc {size} MiB") or {}
        n = f.get(f"alloc {size} MiB, NNBENCH_GPU=nvml") or {}
        lines.append(
            f"| `alloc`, a {size} MiB tensor beside a 256 MiB memo: `gpu_peak_bytes`, "
            f"`call_gpu_peak_bytes`, reserved peak | {mib(a.get('gpu_peak_bytes'))}, "
            f"{mib(a.get('call_gpu_peak_bytes'))}, {mib(a.get('gpu_reserved_peak_bytes'))} "
            f"| {256 + size}.0 MiB, {size}.0 MiB, at least the first |")
        lines.append(
            f"| the same by NVML (`NNBENCH_GPU=nvml`): peak, call | {mib(n.get('gpu_peak_bytes'))}, "
            f"{mib(n.get('call_gpu_peak_bytes'))} | the CUDA context and cached blocks count |")
    m = f.get("matmul (nnbench)") or {}
    p = m.get("percentiles") or {}
    lines.append(
        f"| `matmul`, 8192² float32: median, p50, p99 | {ms(m.get('median_ns'))}, "
        f"{ms(p.get('p50_ns'))}, {ms(p.get('p99_ns'))} | CUDA events: {ms(ref.get('event_median_ns'))} |")
    queued = f.get("matmul queued (host clock, no wait), s")
    lines.append(
        f"| the same call, not waited for | {ms(queued * 1e9 if queued else None)} "
        f"| PyTorch: {ms(ref.get('queued_median_ns'))} |")
    e = f.get("matmul energy") or {}
    lines.append(
        f"| `matmul`'s energy (NVML's counter over the timed calls): joules a call, mean power "
        f"| {e.get('joules', 0):.2f} J, {e.get('watts', 0):.0f} W ({e.get('method') or e.get('reason')}) "
        f"| a power the device can draw (30-1500 W) |")
    pr = f.get("matmul paired") or {}
    lines.append(
        f"| `matmul` paired with a copy of its build | {pr.get('verdict')} by {pr.get('clock')} time, "
        f"{pr.get('rounds')} rounds, estimate {pr.get('estimate', 0):.4f} | unchanged |")
    free = f.get("pair, no budget") or {}
    budget = f.get("pair, --memo-gpu-budget 2.5GiB") or {}
    used = f.get("pair: device used peak (nvidia-smi), no budget / budget") or [None, None]
    lines.append(
        f"| `pair`, 9 cases over six 1 GiB memos: live bytes in a call, device used (nvidia-smi) "
        f"| {mib(free.get('max live bytes in a call'))}, {used[0]}; with `--memo-gpu-budget 2.5GiB`: "
        f"{mib(budget.get('max live bytes in a call'))}, {used[1]} | at most 2.5 GiB with the budget |")
    child = f.get("child (no tch, NVML)") or {}
    lines.append(
        f"| `child`, no `tch`: a Python child holding 1 GiB, NVML | {mib(child.get('gpu_peak_bytes'))} "
        f"({child.get('gpu_method')}) | 1024.0 MiB and the child's CUDA context |")
    lines += ["", "| Fashion-MNIST case | accuracy | images/s recorded | images/s of the median pass | time "
              "| GPU peak | call's GPU peak |",
              "|---|---|---|---|---|---|---|"]
    for key, v in f.items():
        if key.startswith("mnist classify/"):
            rate = 10000 / (v.get("median_ns") / 1e9) if v.get("median_ns") else None
            lines.append(
                f"| `{key[len('mnist '):]}` | {v.get('accuracy')} | {v.get('images_per_second') or 0:.0f} "
                f"| {rate:.0f} | {ms(v.get('median_ns'))} "
                f"| {mib(v.get('gpu_peak_bytes')) if v.get('gpu_peak_bytes') else '-'} "
                f"| {mib(v.get('call_gpu_peak_bytes')) if v.get('gpu_peak_bytes') else '-'} |")
    verdicts = f.get("mnist paired") or []
    lines += ["", "The CUDA cases paired with a copy of their build: "
              + ", ".join(f"{v} by {clock} time" for _, v, clock in verdicts) + "."]
    passed = sum(r["ok"] for r in c.rows)
    lines += ["", f"{passed} of {len(c.rows)} checks passed (`summary.md` lists them)."]
    with open(os.path.join(out, "figures.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


# Every check a complete run makes: one that did not run (a part that
# returned early, a record that is missing) fails, so that the checker
# cannot pass on what it never looked at.
EXPECTED = [
    *(f"step {name} exits {code}" for name, code in STEP_EXITS.items()),
    "alloc ran",
    *(f"alloc {size} MiB: {what}" for size in (512, 64) for what in (
        "method is the allocator",
        "gpu_peak_bytes = fixture + call within 1% + 2 MiB",
        "call_gpu_peak_bytes leaves the fixture out",
        "reserved peak >= allocated peak")),
    "NVML beside the allocator: process method, at least the allocator's reserved peak",
    "--isolate with CUDA cases: same figures from workers",
    "matmul ran",
    "matmul: nnbench's median within 5% of CUDA events",
    "matmul: without waiting it would be far shorter",
    "matmul: recorded as a call that used the device",
    "matmul: percentiles wait for the device",
    "matmul: energy counted by NVML, at a power the device can draw",
    "matmul paired against the same build passes",
    "matmul paired rounds wait for the device",
    "pair ran with and without a budget",
    "--memo-gpu-budget holds: live tensors in each call within 2.5 GiB",
    "--memo-gpu-budget shows in the device's used memory (nvidia-smi)",
    "--memo-gpu-budget holds in the allocator's reserved memory",
    "an out-of-memory on the GPU fails that case, clearly",
    "the other cases of that run pass",
    "NVML alone (no tch) reads a Python torch process's 1 GiB",
    "mnist: CUDA cases beside the CPU cases",
    "mnist: CUDA accuracy as on the CPU (above 80%), GPU peak recorded",
    "mnist: the recorded images/s is the warm passes' (within 25% of the median pass's)",
    "mnist: the CUDA cases are judged by wall time",
    "mnist: the CPU cases have no GPU memory of their own",
    "mnist: paired run of the CUDA cases against a copy passes",
]


def missing(c):
    """Fails each expected check that did not run."""
    ran = {r["check"] for r in c.rows}
    for name in EXPECTED:
        if name not in ran:
            c.check(name, False, "did not run")


def judge(out):
    c = Checks()
    steps = {}
    if os.path.exists(os.path.join(out, "steps")):
        for line in open(os.path.join(out, "steps")):
            name, rc, seconds = line.split()
            steps[name] = {"exit": int(rc), "seconds": int(seconds)}
    c.figure("steps", steps)
    device = open(os.path.join(out, "device.txt")).read().strip() if os.path.exists(
        os.path.join(out, "device.txt")) else None
    c.figure("device", device)
    for part in (judge_steps, judge_alloc, judge_matmul, judge_budget, judge_oom, judge_child, judge_mnist):
        try:
            part(c, out)
        except Exception as e:  # one part's surprise must not hide the others
            c.check(part.__name__, False, f"{type(e).__name__}: {e}")
    missing(c)
    figures_section(c, out)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"checks": c.rows, "figures": c.figures}, f, indent=1, default=str)
    lines = ["| check | ok | detail |", "| --- | --- | --- |"]
    lines += [f"| {r['check']} | {'yes' if r['ok'] else 'NO'} | {r['detail']} |" for r in c.rows]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(json.dumps(c.figures, indent=1, default=str))
    failed = [r for r in c.rows if not r["ok"]]
    print(f"{len(c.rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ref = sub.add_parser("reference")
    ref.add_argument("--out", required=True)
    jud = sub.add_parser("judge")
    jud.add_argument("out")
    args = parser.parse_args()
    if args.command == "reference":
        reference(args.out)
        return 0
    return judge(args.out)


if __name__ == "__main__":
    sys.exit(main())
