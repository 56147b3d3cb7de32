#[nnbench::product(n = [64, 128], scaling = n)]
fn two_sizes(n: usize) -> usize {
    n
}

#[nnbench::product(n = [64, 128, 256], scaling = m)]
fn no_such_parameter(n: usize) -> usize {
    n
}

#[nnbench::parametrize([(size = "small"), (size = "medium"), (size = "large")], scaling = size)]
fn not_a_number(size: &str) -> usize {
    size.len()
}

#[nnbench::product(n = [64, 128, 256], scaling = "n")]
fn not_a_name(n: usize) -> usize {
    n
}

#[nnbench::parametrize([(n = 1.5), (n = 1.5), (n = 3.0)], scaling = n)]
fn repeated_values(n: f64) -> f64 {
    n
}

#[nnbench::benchmark(scaling = n)]
fn single() {}

// Values made by an expression are checked when the run starts.
const SIZES: [usize; 3] = [1, 2, 4];

#[nnbench::product(n = SIZES, k = [1, 2], scaling = n)]
fn from_an_expression(n: usize, k: usize) -> usize {
    n * k
}

fn main() {}
