//! The registry of `lidx repro` (selection by id, paper and `all`; plans whose outputs stay in
//! their directory) and its CSV writer (every field of every record, in first-seen order).

use std::path::Path;

use lidx_bench::repro::plan::{self, Scale, Status, StepOutput};
use lidx_bench::repro::render;
use lidx_bench::BenchError;

#[test]
fn selectors_pick_ids_papers_and_all_once_each() {
    let ids = |s: &[&str]| -> Vec<&str> {
        let selectors: Vec<String> = s.iter().map(|x| x.to_string()).collect();
        plan::select(&selectors)
            .unwrap()
            .iter()
            .map(|e| e.id)
            .collect()
    };
    assert_eq!(ids(&["003-fig6"]), ["003-fig6"]);
    let paper = ids(&["004"]);
    assert_eq!(paper, ["004-table1", "004-fig7", "004-fig8"]);
    assert_eq!(
        ids(&["004", "004-fig7"]),
        paper,
        "a repeated experiment runs once"
    );
    assert_eq!(ids(&["all"]).len(), plan::all().len());
    match plan::select(&["003-fig99".to_string()]) {
        Err(BenchError::UnknownExperiment { got, known }) => {
            assert_eq!(got, "003-fig99");
            assert_eq!(known.len(), plan::all().len());
        }
        other => panic!("expected an unknown experiment, got {other:?}"),
    }
}

#[test]
fn every_plan_writes_into_its_output_directory_only() {
    let out = Path::new("/nowhere/out");
    for e in plan::all() {
        for scale in [Scale::Small, Scale::Full] {
            let context = e.context(scale, Some("gen:lognormal:1K"), Some("100"), out);
            let plan = match (e.status, e.plan(&context)) {
                (Status::Ready(_), Ok(plan)) => plan,
                (Status::NotYet(_), Err(BenchError::NotReproducible { id, .. })) => {
                    assert_eq!(id, e.id);
                    continue;
                }
                (_, other) => panic!("{}: {other:?}", e.id),
            };
            assert!(!plan.steps.is_empty(), "{}", e.id);
            for output in plan.outputs(&context) {
                assert!(output.starts_with(out), "{}: {}", e.id, output.display());
                let name = output.file_name().unwrap().to_string_lossy().into_owned();
                assert!(name.starts_with(e.id), "{}: {name}", e.id);
            }
            for step in &plan.steps {
                // The user's dataset replaced the plan's, and no step names its own --out.
                if let Some(i) = step.args.iter().position(|a| a == "--dataset") {
                    assert_eq!(step.args[i + 1], "gen:lognormal:1K", "{}", e.id);
                }
                if step.output == StepOutput::Records {
                    assert!(!step.args.iter().any(|a| a == "--out"), "{}", e.id);
                }
            }
        }
    }
}

#[test]
fn the_csv_holds_every_field_of_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    let rows = vec![
        serde_json::json!({"a": 1, "b": "x,y"}),
        serde_json::json!({"b": "z", "c": [1, 2], "d": null}),
    ];
    render::write_csv(&path, &rows).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, "a,b,c,d\n1,\"x,y\",,\n,z,\"[1,2]\",\n");
}
