//! Real outputs, recorded by running each runner on a small project with a failing test
//! (paths shortened), and look-alike lines that must not be read as failures.

use super::*;

fn check(output: &str, names: &[&str], count: Option<u64>, itemized: bool) {
    let got = scan(output);
    assert_eq!(
        got,
        FailedTests {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            count,
            itemized,
        },
        "{output}"
    );
}

#[test]
fn real_outputs_name_their_failing_tests() {
    let table: [(&str, &[&str], Option<u64>, bool); 25] = [
        (
            include_str!("fixtures/cargo_test.txt"),
            &["integ_fails", "tests::test_legacy"],
            Some(2),
            true,
        ),
        (include_str!("fixtures/cargo_pass.txt"), &[], Some(0), false),
        // A build error names no test: not itemized.
        (
            include_str!("fixtures/cargo_build_error.txt"),
            &[],
            None,
            false,
        ),
        (
            include_str!("fixtures/nextest.txt"),
            &[
                "cargoproj tests::test_legacy",
                "cargoproj::integ integ_fails",
            ],
            Some(2),
            true,
        ),
        (
            include_str!("fixtures/unittest.txt"),
            &[
                "test_app.AppTest.test_error",
                "test_app.AppTest.test_legacy",
                "test_app.OtherTest.test_sub",
            ],
            Some(3),
            true,
        ),
        (
            include_str!("fixtures/unittest_v.txt"),
            &[
                "test_app.AppTest.test_error",
                "test_app.AppTest.test_legacy",
                "test_app.OtherTest.test_sub",
            ],
            Some(3),
            true,
        ),
        (
            include_str!("fixtures/unittest_import_error.txt"),
            &[
                "test_app.AppTest.test_error",
                "test_app.AppTest.test_legacy",
                "test_app.OtherTest.test_sub",
                "unittest.loader._FailedTest.test_broken",
            ],
            Some(4),
            true,
        ),
        (include_str!("fixtures/unittest_pass.txt"), &[], None, false),
        (
            include_str!("fixtures/pytest.txt"),
            &[
                "test_app.py::AppTest::test_error",
                "test_app.py::AppTest::test_legacy",
                "test_app.py::OtherTest::test_sub",
            ],
            Some(3),
            true,
        ),
        (
            include_str!("fixtures/pytest_q.txt"),
            &[
                "test_app.py::AppTest::test_error",
                "test_app.py::AppTest::test_legacy",
                "test_app.py::OtherTest::test_sub",
            ],
            Some(3),
            true,
        ),
        (
            include_str!("fixtures/pytest_collect_error.txt"),
            &["test_broken.py"],
            Some(1),
            true,
        ),
        (
            include_str!("fixtures/pytest_pass.txt"),
            &[],
            Some(0),
            false,
        ),
        (
            include_str!("fixtures/node_tap.txt"),
            &["suite > inner fails", "test_legacy"],
            Some(2),
            true,
        ),
        (
            include_str!("fixtures/node_spec.txt"),
            &["inner fails", "test_legacy"],
            Some(2),
            true,
        ),
        (
            include_str!("fixtures/go_test.txt"),
            &["TestAddWrong", "TestTable/neg"],
            Some(2),
            true,
        ),
        (
            include_str!("fixtures/go_test_v.txt"),
            &["TestAddWrong", "TestTable/neg"],
            Some(2),
            true,
        ),
        (include_str!("fixtures/go_pass.txt"), &[], Some(0), false),
        // A package that did not build names none of its tests.
        (
            include_str!("fixtures/go_build_error.txt"),
            &["TestAddWrong", "TestTable/neg"],
            None,
            false,
        ),
        // The panic ended the run: TestC never ran.
        (
            include_str!("fixtures/go_panic.txt"),
            &["TestA", "TestB"],
            None,
            false,
        ),
        (
            include_str!("fixtures/jest.txt"),
            &[
                "src/sum.test.js › sum › adds 2 + 2",
                "src/sum.test.js › sum › nested › negative",
                "src/sum.test.js › top level fails",
            ],
            Some(3),
            true,
        ),
        (include_str!("fixtures/jest_pass.txt"), &[], Some(0), false),
        // A file that could not run counts in no test total.
        (
            include_str!("fixtures/jest_suite_error.txt"),
            &[
                "src/sum.test.js › sum › adds 2 + 2",
                "src/sum.test.js › sum › nested › negative",
                "src/sum.test.js › top level fails",
            ],
            Some(3),
            false,
        ),
        (
            include_str!("fixtures/vitest.txt"),
            &[
                "sum.test.js > sum > adds 2 + 2",
                "sum.test.js > sum > nested > negative",
                "sum.test.js > top level fails",
            ],
            Some(3),
            true,
        ),
        (
            include_str!("fixtures/vitest_pass.txt"),
            &[],
            Some(0),
            false,
        ),
        (
            include_str!("fixtures/vitest_suite_error.txt"),
            &[
                "sum.test.js > sum > adds 2 + 2",
                "sum.test.js > sum > nested > negative",
                "sum.test.js > top level fails",
            ],
            Some(3),
            false,
        ),
    ];
    for (output, names, count, itemized) in table {
        check(output, names, count, itemized);
    }
}

#[test]
fn look_alikes_are_no_failures() {
    for line in [
        // A test's own output quoting a runner, without the runner's frame around it.
        "FAIL: test_fake (test_app.AppTest.test_fake)",
        "ERROR: something went wrong (see log)",
        "    test integ_fails ... FAILED",
        "# not ok 9 - fake",
        "✖ test_legacy (23.1ms)",
        "RuntimeError: FAIL: not a header",
        "FAILED (failures=0)",
        "error: test failed, to rerun pass `--test integ`",
        "Ran 5 tests in 0.001s",
        "not ok - no number",
        "FAILED to connect to the database",
        // go test's, Jest's and Vitest's markers without the runner's frame around them.
        "--- FAIL: TestFake (0.00s)",
        "  ● sum › quoted",
        " FAIL  quoted > test",
        "FAIL: not a jest file line",
    ] {
        let got = scan(line);
        assert!(got.names.is_empty(), "{line:?} gave {got:?}");
        assert!(!got.itemized, "{line:?}");
    }
}

#[test]
fn a_count_without_its_names_or_an_unfinished_run_is_not_itemized() {
    // Two failures counted, one named (the other crashed mid-line).
    check(
        "running 2 tests\ntest a ... FAILED\ntest b ... \ntest result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n",
        &["a"],
        Some(2),
        false,
    );
    // A second binary started and never finished (killed).
    check(
        "running 1 test\ntest a ... FAILED\n\nfailures:\n    a\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\nrunning 3 tests\n",
        &["a"],
        Some(1),
        false,
    );
    // unittest's unexpected successes have no header of their own.
    check(
        "======================================================================\nFAIL: test_a (m.T.test_a)\nFAILED (failures=1, unexpected successes=1)\n",
        &["m.T.test_a"],
        Some(2),
        false,
    );
}

#[test]
fn python_before_3_11_names_the_class_only() {
    check(
        "======================================================================\nFAIL: test_data (test_app.AppTest)\n----\nFAILED (failures=1)\n",
        &["test_app.AppTest.test_data"],
        Some(1),
        true,
    );
}
