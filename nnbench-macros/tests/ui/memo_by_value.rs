use nnbench::Memo;

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct ModelMemo;

impl Memo for ModelMemo {
    type Value = Vec<f32>;
    fn compute(&self) -> nnbench::Result<Vec<f32>> {
        Ok(vec![1.0])
    }
}

#[nnbench::product(model = [ModelMemo])]
fn accuracy(model: Vec<f32>) -> f32 {
    model.iter().sum()
}

fn main() {}
