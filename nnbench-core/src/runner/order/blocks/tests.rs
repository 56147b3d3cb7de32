use super::*;

const MIB: u64 = 1 << 20;

/// A full grid over axes with `dims[i]` memos each, every memo `size`
/// bytes, one case per point, in declared (row-major) order.
fn grid(dims: &[usize], size: u64, budget: u64) -> Problem {
    let names = ["model", "data", "tokenizer", "prompt"];
    let offsets: Vec<usize> = dims
        .iter()
        .scan(0, |at, &n| {
            let first = *at;
            *at += n;
            Some(first)
        })
        .collect();
    let memos: usize = dims.iter().sum();
    let mut groups = Vec::new();
    let points: usize = dims.iter().product();
    for point in 0..points {
        let mut rest = point;
        let mut on_axis = vec![None; dims.len()];
        for axis in (0..dims.len()).rev() {
            on_axis[axis] = Some(offsets[axis] + rest % dims[axis]);
            rest /= dims[axis];
        }
        groups.push(Group {
            memos: on_axis.iter().flatten().copied().collect(),
            on_axis,
            cases: vec![point],
        });
    }
    Problem {
        sizes: vec![
            Sizes {
                host: size,
                device: 0
            };
            memos
        ],
        groups,
        axes: names[..dims.len()].to_vec(),
        budget: Sizes {
            host: budget,
            device: u64::MAX,
        },
        resident: Vec::new(),
    }
}

fn declared(problem: &Problem) -> Vec<usize> {
    (0..problem.groups.len()).collect()
}

fn covers_every_group_once(problem: &Problem, plan: &BlockOrder) {
    let mut seen = plan.groups.clone();
    seen.sort_unstable();
    assert_eq!(seen, declared(problem));
}

#[test]
fn eight_models_by_six_datasets_load_as_few_as_the_best_block_order() {
    // Three 64 MiB fixtures fit in 200 MiB: two datasets held while the
    // models stream, 6 + 3 * 8 - 2 = 28 loads.
    let tight = grid(&[8, 6], 64 * MIB, 200 * MIB);
    let plan = tight.plan(&declared(&tight));
    covers_every_group_once(&tight, &plan);
    assert_eq!(plan.cost.loads, 28, "{}", plan.order);
    assert_eq!(plan.order, "`data` in blocks of 2, `model` streamed");
    assert_eq!(tight.lower_bound().loads, 14);
    assert!(plan.cost.peak.host <= 200 * MIB);
    assert!(plan.reordered);

    // Six fit in 400 MiB: five models held, 8 + 2 * 6 - 1 = 19 loads; two
    // blocks of four do better, keeping two datasets across the boundary.
    let roomy = grid(&[8, 6], 64 * MIB, 400 * MIB);
    let plan = roomy.plan(&declared(&roomy));
    covers_every_group_once(&roomy, &plan);
    assert_eq!(plan.cost.loads, 18, "{}", plan.order);
    assert_eq!(plan.order, "`model` in blocks of 4, `data` streamed");
    assert!(plan.cost.peak.host <= 400 * MIB);
}

#[test]
fn where_no_budget_binds_the_given_order_stays() {
    let free = grid(&[8, 6], 64 * MIB, 4096 * MIB);
    let given = declared(&free);
    let plan = free.plan(&given);
    assert!(!plan.reordered);
    assert_eq!(plan.groups, given);
    assert_eq!(plan.cost.loads, 14);
    assert_eq!(plan.order, "the declared order");
}

#[test]
fn a_three_dimensional_grid_beats_its_declared_order_under_a_budget() {
    let problem = grid(&[4, 5, 3], 32 * MIB, 200 * MIB);
    let given = declared(&problem);
    let before = simulate::simulate(&problem, &given);
    let plan = problem.plan(&given);
    covers_every_group_once(&problem, &plan);
    assert!(
        plan.cost.loads < before.loads,
        "{} vs {}",
        plan.cost.loads,
        before.loads
    );
    assert!(plan.cost.loads >= problem.lower_bound().loads);
    assert!(plan.cost.peak.host <= 200 * MIB);
}

#[test]
fn memos_resident_at_the_start_are_used_before_they_go() {
    let mut problem = grid(&[8, 6], 64 * MIB, 200 * MIB);
    // The first case ran: its model and dataset are resident.
    problem.groups.remove(0);
    problem.resident = vec![0, 8];
    let plan = problem.plan(&declared(&problem));
    covers_every_group_once(&problem, &plan);
    let first = &problem.groups[plan.groups[0]];
    assert!(first.memos.contains(&0) || first.memos.contains(&8));
    // The lower bound leaves out what is resident.
    assert_eq!(problem.lower_bound().loads, 12);
    assert!(plan.cost.loads <= 27, "{}", plan.cost.loads);
}

#[test]
fn a_gpu_budget_plans_by_device_bytes() {
    let mut problem = grid(&[6, 4], 0, u64::MAX);
    for size in &mut problem.sizes {
        *size = Sizes {
            host: MIB,
            device: 8 << 30,
        };
    }
    problem.budget = Sizes {
        host: u64::MAX,
        device: 26 << 30,
    };
    let plan = problem.plan(&declared(&problem));
    assert!(plan.reordered);
    assert!(plan.cost.peak.device <= 26 << 30);
    assert!(plan.cost.loads <= 4 + 6 * 2, "{}", plan.cost.loads);
}

#[test]
fn the_simulation_counts_each_load_and_evicts_after_the_last_use() {
    let problem = grid(&[2, 2], 10, 100);
    let cost = simulate::simulate(&problem, &declared(&problem));
    assert_eq!(cost.loads, 4);
    assert_eq!(cost.bytes, 40);
    // m0 d0, m0 d1 (d0 held: used again), m1 d0, m1 d1: m0 goes before m1.
    assert_eq!(cost.peak.host, 30);
}
