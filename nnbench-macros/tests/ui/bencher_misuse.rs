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

#[nnbench::product(b = [1, 2], n = [3])]
fn values_for_the_bencher(b: Bencher, n: u64) {
    b.bench(|| n);
}

#[nnbench::parametrize([(n = 1, b = 2)])]
fn a_set_for_the_bencher(b: Bencher, n: u64) {
    b.bench(|| n);
}

fn main() {}
