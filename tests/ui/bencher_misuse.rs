use nnbench::Bencher;

#[nnbench::parametrize([(n = 1)], threads = [2])]
fn on_threads(b: Bencher, n: u64) {
    b.bench(|| n);
}

#[nnbench::benchmark]
fn two_benchers(a: Bencher, b: Bencher) {
    a.bench(|| 1);
    drop(b);
}

fn main() {}
