//! The example suite of `docs/development/add-a-suite.md`, run: the page shows the code
//! between the `example` markers below, word for word (checked here), so the page's example
//! is code that compiles and runs through the core's grid runner.

// example: start
use replay_core::export::rows::Row;
use replay_core::measure::{MeasureError, Placement, Target};
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};

/// Sums of 1..=n on the host: one case per n, checked against n(n+1)/2, then timed.
pub struct Sums;

/// The work of one case: summing its values.
struct Summing {
    values: Vec<u64>,
}

impl Target for Summing {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }
    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            std::hint::black_box(std::hint::black_box(&self.values).iter().sum::<u64>());
        }
        Ok(())
    }
}

impl Suite for Sums {
    type Case = u64;
    type Device = ();

    fn columns(&self) -> Vec<&'static str> {
        vec!["n", "time_us_median", "status", "error_msg"]
    }
    fn cases(&self) -> Vec<u64> {
        vec![1_000, 10_000, 100_000]
    }
    fn check(&self, n: &u64, _: &()) -> Result<(), CaseError> {
        let sum: u64 = (1..=*n).sum();
        if sum == n * (n + 1) / 2 {
            Ok(())
        } else {
            let message = format!("sum {sum} is not n(n+1)/2");
            Err(CaseError::new(CaseStatus::Error, message))
        }
    }
    fn target<'s>(&'s self, n: &u64, _: &'s ()) -> Result<Box<dyn Target + 's>, CaseError> {
        Ok(Box::new(Summing {
            values: (1..=*n).collect(),
        }))
    }
    fn row(&self, n: &u64, outcome: &CaseOutcome) -> Row {
        let row = Row::new()
            .with("n", *n)
            .with("status", outcome.status().as_str());
        match outcome {
            CaseOutcome::Measured(m) => row.with("time_us_median", m.summary.median),
            CaseOutcome::Failed(e) => row.with("error_msg", e.message.clone()),
        }
    }
}
// example: end

use replay_core::measure::{MeasureConfig, MonotonicClock};
use replay_core::shard::Shard;

fn run(shard: Shard, resumed: &[Row]) -> (Vec<Row>, replay_core::suite::RunTally) {
    let mut rows: Vec<Row> = Vec::new();
    let tally = replay_core::suite::run_resumed(
        &Sums,
        shard,
        resumed,
        &(),
        &MeasureConfig::fixed_runs(2, 5),
        &MonotonicClock::new(),
        &mut rows,
        |_| {},
    )
    .unwrap();
    (rows, tally)
}

fn median(row: &Row) -> f64 {
    row.get("time_us_median").and_then(|v| v.as_f64()).unwrap()
}

#[test]
fn the_example_suite_runs_checked_and_timed_a_row_per_case() {
    let (rows, tally) = run(Shard::WHOLE, &[]);
    assert_eq!(tally.ok, 3);
    let ns: Vec<u64> = rows
        .iter()
        .map(|r| r.get("n").unwrap().as_u64().unwrap())
        .collect();
    assert_eq!(ns, [1_000, 10_000, 100_000]);
    assert!(rows.iter().all(|r| r.get("status").unwrap() == "ok"));
    // A hundred times the values take longer to sum.
    assert!(median(&rows[2]) > median(&rows[0]), "{rows:?}");
    // The runner deals out shards and resumes: shard 2/2 is the second case; resumed after
    // the first row, shard 1/2 runs the third only.
    let (second, _) = run(Shard::new(2, 2).unwrap(), &[]);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].get("n"), rows[1].get("n"));
    let (rest, tally) = run(Shard::new(1, 2).unwrap(), &rows[..1]);
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].get("n"), rows[2].get("n"));
    assert_eq!(tally.ok, 2);
}

#[test]
fn the_page_shows_the_example_as_it_is_here() {
    let this = include_str!("example_suite.rs");
    let example = this
        .split("// example: start\n")
        .nth(1)
        .and_then(|rest| rest.split("// example: end\n").next())
        .expect("the example markers");
    let page_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/development/add-a-suite.md"
    );
    let page = std::fs::read_to_string(page_path).expect("add-a-suite.md");
    let shown = page
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```\n").next())
        .expect("a rust block in add-a-suite.md");
    assert_eq!(
        shown, example,
        "docs/development/add-a-suite.md must show crates/core/tests/example_suite.rs's example"
    );
}
