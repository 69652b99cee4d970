//! `--index` lists parse into typed specs with defaults; anything else is a `BadSpec` that
//! names the accepted forms.

use lidx::catalog::Role;
use lidx_bench::registry::{parse_count, show_count, IndexSpec};
use lidx_bench::BenchError;

#[test]
fn the_full_example_list_parses() {
    let specs = IndexSpec::parse_list(
        "pgm:eps=64,rs:bits=18:err=32,rmi:leaves=1M,btree,sorted,spgm:every=128:eps=2,\
         btree-model:every=256,fiting:eps=64",
    )
    .unwrap();
    assert_eq!(
        specs,
        [
            IndexSpec::Pgm {
                eps: 64,
                eps_rec: 8
            },
            IndexSpec::Rs { bits: 18, err: 32 },
            IndexSpec::Rmi { leaves: 1_000_000 },
            IndexSpec::Btree {
                leaf: 16,
                inner: 15
            },
            IndexSpec::Sorted {},
            IndexSpec::Spgm { every: 128, eps: 2 },
            IndexSpec::BtreeModel { every: 256 },
            IndexSpec::Fiting { eps: 64 },
        ]
    );
    let labels: Vec<_> = specs.iter().map(IndexSpec::label).collect();
    assert_eq!(labels[2], "rmi:leaves=1M");
    assert_eq!(labels[6], "btree-model:every=256");
}

#[test]
fn defaults_fill_missing_parameters_in_any_order() {
    assert_eq!(
        IndexSpec::parse("rs").unwrap(),
        IndexSpec::Rs { bits: 18, err: 32 }
    );
    assert_eq!(
        IndexSpec::parse("rs:err=8").unwrap(),
        IndexSpec::Rs { bits: 18, err: 8 }
    );
    assert_eq!(
        IndexSpec::parse(" spgm:eps=4:every=64 ").unwrap(),
        IndexSpec::Spgm { every: 64, eps: 4 }
    );
    assert_eq!(IndexSpec::parse("rs").unwrap().label(), "rs:bits=18:err=32");
    assert_eq!(
        IndexSpec::parse("rs:err=8").unwrap().params_text(),
        "bits=18:err=8"
    );
    assert_eq!(IndexSpec::parse("sorted").unwrap().params_text(), "");
}

#[test]
fn the_default_list_parses_with_the_baseline_first() {
    let specs = IndexSpec::parse_list(Role::StaticIndex.default_list()).unwrap();
    assert!(specs[0].is_baseline());
    assert_eq!(specs.len(), 5);
}

#[test]
fn counts_accept_suffixes() {
    assert_eq!(parse_count("1M"), Some(1_000_000));
    assert_eq!(parse_count("64K"), Some(64_000));
    assert_eq!(parse_count("64Ki"), Some(65_536));
    assert_eq!(parse_count("2Gi"), Some(2 << 30));
    assert_eq!(parse_count("10_000"), Some(10_000));
    assert_eq!(parse_count("M"), None);
    assert_eq!(parse_count("1.5M"), None);
    assert_eq!(parse_count("99999999999G"), None);
    assert_eq!(show_count(3_000_000), "3M");
    assert_eq!(show_count(65_536), "65536");
    assert_eq!(show_count(1 << 20), "1Mi");
    assert_eq!(IndexSpec::parse("rmi").unwrap().label(), "rmi:leaves=1Mi");
}

#[test]
fn bad_specs_name_the_accepted_forms() {
    for bad in [
        "pgmm",
        "pgm:eps",
        "pgm:eps=x",
        "pgm:eps=-1",
        "pgm:epsilon=64",
        "pgm:eps=1:eps=2",
        "rs:bits=99999999999",
        "sorted:eps=1",
        "",
        " , ",
        "sorted,,nope",
    ] {
        match IndexSpec::parse_list(bad).map_err(BenchError::from) {
            Err(e @ BenchError::BadSpec { .. }) => {
                let message = e.to_string();
                assert!(message.contains("rs[:bits=18][:err=32]"), "{message}");
                assert!(!message.contains('\n'), "{message}");
            }
            other => panic!("{bad:?} gave {other:?}"),
        }
    }
}
