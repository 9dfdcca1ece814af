//! The einsum crate without Python: parser errors are typed (never a panic), opt_einsum's
//! greedy paths on hand-checked networks, the exact planners against brute force, trees,
//! exact big costs, and contractions run through the eager `Session` against loops.

use std::sync::Arc;
use tenferro_cpu::CpuEngine;
use tenferro_eager::{DirectHost, EagerTensor, ModeState, Operand, Runtime, IMPLICIT};
use tenferro_einsum::path::{self, Network};
use tenferro_einsum::{einsum, parse, plan, Big, Minimize, Optimize, Tree};
use tenferro_tensor::{DType, Error, Tensor};

fn host() -> DirectHost {
    DirectHost {
        engine: Arc::new(CpuEngine::new(Some(1)).unwrap()),
    }
}

fn einsum_error(subscripts: &str, shapes: &[&[usize]]) -> String {
    match parse(subscripts, shapes) {
        Err(e @ Error::Einsum { .. }) => e.to_string(),
        other => panic!("{subscripts}: expected an EinsumError, got {other:?}"),
    }
}

#[test]
fn malformed_subscripts_are_einsum_errors_naming_the_place() {
    let cases: &[(&str, &[&[usize]], &str)] = &[
        ("ij,jk->ik", &[&[2, 3]], "2 input term(s) but 1 operand(s)"),
        (
            "ij,jk->ik",
            &[&[2, 3], &[4, 5]],
            "label 'j' has size 3 in operand 0 but 4",
        ),
        ("ij->ik", &[&[2, 3]], "output label 'k'"),
        ("i>->i", &[&[2, 2]], "'>' at position 1"),
        ("i.j->i", &[&[2, 2]], "position 1"),
        ("i->i->i", &[&[2]], "more than one '->'"),
        ("ij->i", &[&[2]], "rank 1"),
        ("...i,...i->i", &[&[2, 3], &[4, 3]], "ellipsis"),
        ("...ij->ij", &[&[2, 3, 4]], "no '...'"),
        (
            "ii->i",
            &[&[2, 3]],
            "repeated in operand 0 with sizes 2 and 3",
        ),
        ("......", &[&[2]], "more than one ellipsis"),
    ];
    for (s, shapes, frag) in cases {
        let msg = einsum_error(s, shapes);
        assert!(msg.starts_with("einsum: subscripts '"), "{msg}");
        assert!(msg.contains(frag), "{s}: {msg}");
    }
}

#[test]
fn implicit_output_and_ellipsis() {
    let p = parse("ba,ac", &[&[2, 3], &[3, 4]]).unwrap();
    assert_eq!(p.equation(), "ba,ac->bc");
    let p = parse("...ij,...jk", &[&[2, 1, 3, 4], &[5, 4, 2]]).unwrap();
    assert_eq!(p.equation(), "..ij,.jk->..ik");
    assert_eq!(p.output.len(), 4);
    let p = parse("αβ,βγ->γα", &[&[2, 3], &[3, 4]]).unwrap();
    assert_eq!(p.equation(), "αβ,βγ->γα");
    let p = parse("i0,0j", &[&[2, 3], &[3, 4]]).unwrap(); // digits are labels (opt_einsum)
    assert_eq!(p.equation(), "i0,0j->ij");
    let p = parse("éz,zß", &[&[2, 3], &[3, 4]]).unwrap();
    assert_eq!(p.equation(), "éz,zß->ßé"); // code-point order
}

fn net(terms: &[&str], out: &str, size: &[(char, usize)]) -> Network {
    let labels: Vec<char> = size.iter().map(|x| x.0).collect();
    let id = |c: char| labels.iter().position(|&x| x == c).unwrap();
    let set = |t: &str| {
        let mut v: Vec<usize> = t.chars().map(id).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    Network {
        inputs: terms.iter().map(|t| set(t)).collect(),
        output: set(out),
        sizes: size.iter().map(|x| x.1).collect(),
    }
}

#[test]
fn greedy_matches_opt_einsum_on_known_networks() {
    // opt_einsum 3.4: oe.paths.greedy([set('abd'), set('ac'), set('bdc')], set(''),
    // {'a': 1, 'b': 2, 'c': 3, 'd': 4}) == [(0, 2), (0, 1)]
    let n = net(
        &["abd", "ac", "bdc"],
        "",
        &[('a', 1), ('b', 2), ('c', 3), ('d', 4)],
    );
    assert_eq!(path::greedy(&n), vec![vec![0, 2], vec![0, 1]]);
    let n = net(
        &["ij", "jk", "kl"],
        "il",
        &[('i', 2), ('j', 30), ('k', 40), ('l', 3)],
    );
    assert_eq!(path::greedy(&n), vec![vec![1, 2], vec![0, 1]]);
    // Hadamard products first; disconnected operands last, smallest first
    let n = net(
        &["ab", "ab", "c", "d"],
        "abcd",
        &[('a', 2), ('b', 2), ('c', 3), ('d', 4)],
    );
    assert_eq!(path::greedy(&n), vec![vec![0, 1], vec![0, 1], vec![0, 1]]);
}

/// A cost of these small networks as an integer.
fn exact(c: tenferro_einsum::Cost) -> u128 {
    c.as_exact().expect("an exact cost")
}

/// The least opt_cost over every pairwise order, by brute force.
fn brute(n: &Network) -> u128 {
    fn go(sets: Vec<Vec<usize>>, out: &[usize], sizes: &[usize]) -> u128 {
        if sets.len() == 1 {
            return 0;
        }
        let mut best = u128::MAX;
        for i in 0..sets.len() {
            for j in i + 1..sets.len() {
                let mut rest: Vec<Vec<usize>> = sets.clone();
                rest.remove(j);
                rest.remove(i);
                let mut u: Vec<usize> = sets[i].iter().chain(&sets[j]).copied().collect();
                u.sort_unstable();
                u.dedup();
                let keep: Vec<usize> = u
                    .iter()
                    .copied()
                    .filter(|l| out.contains(l) || rest.iter().any(|s| s.contains(l)))
                    .collect();
                let c = exact(path::flop_count(&u, keep.len() < u.len(), 2, sizes));
                rest.push(keep);
                best = best.min(c + go(rest, out, sizes));
            }
        }
        best
    }
    go(n.inputs.clone(), &n.output, &n.sizes)
}

fn cost(n: &Network, p: &[Vec<usize>]) -> u128 {
    let mut sets = n.inputs.clone();
    let mut total = 0;
    for e in p {
        let mut idx = e.clone();
        idx.sort_unstable();
        let mut u: Vec<usize> = idx.iter().flat_map(|&k| sets[k].clone()).collect();
        u.sort_unstable();
        u.dedup();
        for &k in idx.iter().rev() {
            sets.remove(k);
        }
        let keep: Vec<usize> = u
            .iter()
            .copied()
            .filter(|l| n.output.contains(l) || sets.iter().any(|s| s.contains(l)))
            .collect();
        total += exact(path::flop_count(
            &u,
            keep.len() < u.len(),
            e.len(),
            &n.sizes,
        ));
        sets.push(keep);
    }
    total
}

#[test]
fn optimal_is_the_brute_force_minimum_and_dp_not_worse_than_greedy() {
    let nets = [
        net(
            &["ab", "bc", "cd", "de", "ea"],
            "",
            &[('a', 2), ('b', 3), ('c', 4), ('d', 5), ('e', 6)],
        ),
        net(&["i", "j", "ijk"], "k", &[('i', 4), ('j', 5), ('k', 50)]),
        net(
            &["abc", "bd", "ce", "de", "a"],
            "a",
            &[('a', 3), ('b', 4), ('c', 5), ('d', 6), ('e', 6)],
        ),
        net(
            &["ab", "cd", "ef", "ac"],
            "bdf",
            &[('a', 2), ('b', 7), ('c', 2), ('d', 3), ('e', 5), ('f', 2)],
        ),
    ];
    for n in &nets {
        let opt = path::optimal(n, Minimize::Flops).unwrap();
        assert_eq!(cost(n, &opt), brute(n));
        let dp = path::dp(n, Minimize::Flops).unwrap();
        assert!(cost(n, &dp) <= cost(n, &path::greedy(n)));
        assert!(cost(n, &dp) >= cost(n, &opt));
        let size = path::optimal(n, Minimize::Size).unwrap();
        assert!(cost(n, &size) >= cost(n, &opt));
    }
}

#[test]
fn dp_is_exact_where_outer_products_between_intermediates_pay() {
    // Found against opt_einsum's optimal: the connected-subset DP, its components joined by
    // outer products smallest first, paid 5x here.
    let n = net(
        &["a", "b", "afh", "ceg", "d"],
        "fgh",
        &[
            ('a', 5),
            ('b', 4),
            ('c', 5),
            ('d', 4),
            ('e', 3),
            ('f', 4),
            ('g', 4),
            ('h', 3),
        ],
    );
    let opt = cost(&n, &path::optimal(&n, Minimize::Flops).unwrap());
    assert_eq!(opt, brute(&n));
    assert_eq!(cost(&n, &path::dp(&n, Minimize::Flops).unwrap()), opt);
}

/// The largest intermediate (the final result excepted) along `p`.
fn largest_intermediate(n: &Network, p: &[Vec<usize>]) -> u128 {
    let mut sets = n.inputs.clone();
    let mut largest = 0;
    for (i, e) in p.iter().enumerate() {
        let mut idx = e.clone();
        idx.sort_unstable();
        let mut u: Vec<usize> = idx.iter().flat_map(|&k| sets[k].clone()).collect();
        u.sort_unstable();
        u.dedup();
        for &k in idx.iter().rev() {
            sets.remove(k);
        }
        let keep: Vec<usize> = u
            .iter()
            .copied()
            .filter(|l| n.output.contains(l) || sets.iter().any(|s| s.contains(l)))
            .collect();
        if i + 1 < p.len() {
            largest = largest.max(exact(path::size_of(&keep, &n.sizes)));
        }
        sets.push(keep);
    }
    largest
}

#[test]
fn memory_limits_restrict_every_intermediate() {
    // a chain whose cheapest order makes a 40x3 intermediate
    let n = net(
        &["ij", "jk", "kl", "lm"],
        "im",
        &[('i', 40), ('j', 2), ('k', 30), ('l', 2), ('m', 3)],
    );
    for limit in [1u128, 60, 80, 1000] {
        for p in [
            path::greedy_limited(&n, limit),
            path::optimal_limited(&n, Minimize::Flops, limit)
                .unwrap_or_else(|| path::greedy_limited(&n, limit)),
            path::dp_limited(&n, Minimize::Flops, path::DP_BUDGET, limit)
                .unwrap_or_else(|| path::greedy_limited(&n, limit)),
        ] {
            // a valid path (every operand once) whose pairwise intermediates fit the limit
            let mut left = n.inputs.len();
            for e in &p {
                assert!(e.iter().all(|&k| k < left), "{p:?}");
                left = left + 1 - e.len();
            }
            assert_eq!(left, 1, "{p:?}");
            if p.iter().all(|e| e.len() == 2) {
                assert!(largest_intermediate(&n, &p) <= limit, "{limit} {p:?}");
            }
        }
    }
    // nothing fits: one joint contraction
    assert_eq!(path::greedy_limited(&n, 1), vec![vec![0, 1, 2, 3]]);
    // unlimited: the unrestricted planners
    assert_eq!(
        path::optimal_limited(&n, Minimize::Flops, u128::MAX),
        path::optimal(&n, Minimize::Flops)
    );
    assert_eq!(path::greedy_limited(&n, u128::MAX), path::greedy(&n));
    // the exact planner under a limit is the least cost among paths within it
    let lim = path::optimal_limited(&n, Minimize::Flops, 80).unwrap();
    assert!(largest_intermediate(&n, &lim) <= 80);
    assert!(cost(&n, &lim) >= cost(&n, &path::optimal(&n, Minimize::Flops).unwrap()));
}

#[test]
fn trees_and_paths() {
    let t = Tree::Node(vec![
        Tree::Node(vec![Tree::Leaf(0), Tree::Leaf(2)]),
        Tree::Node(vec![Tree::Leaf(1), Tree::Leaf(3)]),
    ]);
    assert_eq!(
        path::tree_to_path(&t, 4).unwrap(),
        vec![vec![0, 2], vec![0, 1], vec![0, 1]]
    );
    assert!(path::tree_to_path(&t, 5).is_err());
    let bad = Tree::Node(vec![Tree::Leaf(0), Tree::Leaf(0)]);
    assert!(path::tree_to_path(&bad, 2).is_err());
}

#[test]
fn big_costs_are_exact() {
    let mut b = Big::from(1u64);
    for _ in 0..300 {
        b.mul_small(10);
    }
    let s = b.to_string();
    assert_eq!(s.len(), 301);
    assert!(s.starts_with('1') && s[1..].bytes().all(|c| c == b'0'));
    let mut c = Big::from(u64::MAX);
    c.add(&Big::from(1u64));
    assert_eq!(c.to_string(), "18446744073709551616");
    c.mul_small(u64::MAX);
    assert_eq!(c.to_string(), "340282366920938463444927863358058659840");
}

#[test]
fn info_costs_follow_opt_einsum() {
    let metas: Vec<(DType, &[usize], bool)> = vec![
        (DType::F64, &[2, 30][..], false),
        (DType::F64, &[30, 40][..], false),
        (DType::F64, &[40, 3][..], false),
    ];
    let p = plan("ij,jk,kl->il", &metas, &Optimize::Greedy, Minimize::Flops).unwrap();
    assert_eq!(p.path, vec![vec![1, 2], vec![0, 1]]);
    assert_eq!(p.report.opt_cost.to_string(), "7560");
    assert_eq!(p.report.largest.to_string(), "1200");
    let err = plan(
        "ij,jk,kl->il",
        &metas,
        &Optimize::Path(vec![vec![0, 3]]),
        Minimize::Flops,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("invalid path entry 0"), "{err}");
    let err = plan(
        "ij,jk,kl->il",
        &metas,
        &Optimize::Path(vec![vec![0, 1]]),
        Minimize::Flops,
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("uncontracted"), "{err}");
}

fn t64(shape: &[usize], v: Vec<f64>) -> Tensor {
    Tensor::from_vec(shape, v).unwrap()
}

#[test]
fn contractions_run_through_the_session() {
    let h = host();
    let rt = Runtime::new();
    let mode = ModeState::default();
    let a: Vec<f64> = (0..6).map(f64::from).collect(); // 2x3 row-major values
    let b: Vec<f64> = (0..12).map(|x| f64::from(x) * 0.5).collect(); // 3x4
    let ta = EagerTensor::of_data(t64(&[2, 3], a.clone()), rt.clone(), None);
    let tb = EagerTensor::of_data(t64(&[3, 4], b.clone()), rt.clone(), None);
    let got = |subs: &str, opt: Optimize| -> Vec<f64> {
        let y = einsum(
            &IMPLICIT,
            subs,
            vec![Operand::Tensor(&ta), Operand::Tensor(&tb)],
            &opt,
            Minimize::Flops,
            &mode,
            &h,
        )
        .unwrap();
        y.value.tensor("test").unwrap().to_vec::<f64>()
    };
    // from_vec/to_vec are column-major: element (i, j) of a 2x3 tensor is v[i + 2 j]
    let (ta_v, tb_v) = (a.clone(), b.clone());
    // y[k, i] = sum_j a[i, j] b[j, k]
    let at = |i: usize, j: usize| ta_v[i + 2 * j];
    let bt = |j: usize, k: usize| tb_v[j + 3 * k];
    for opt in [
        Optimize::Greedy,
        Optimize::LeftToRight,
        Optimize::Optimal,
        Optimize::Dp,
        Optimize::Auto,
    ] {
        let y = got("ij,jk->ki", opt);
        for k in 0..4 {
            for i in 0..2 {
                let want: f64 = (0..3).map(|j| at(i, j) * bt(j, k)).sum();
                assert!((y[k + 4 * i] - want).abs() < 1e-12, "{k} {i}");
            }
        }
    }
    // an invalid subscript is an EinsumError, not a panic
    let err = einsum(
        &IMPLICIT,
        "ij,jk->il",
        vec![Operand::Tensor(&ta), Operand::Tensor(&tb)],
        &Optimize::Greedy,
        Minimize::Flops,
        &mode,
        &h,
    )
    .err()
    .unwrap();
    assert!(matches!(err, Error::Einsum { .. }), "{err:?}");
}

/// `p`'s opt_cost in the planners' scale-free [`Cost`] (exact below 2^128).
fn cost_scale_free(n: &Network, p: &[Vec<usize>]) -> tenferro_einsum::Cost {
    let mut sets = n.inputs.clone();
    let mut total = tenferro_einsum::Cost::ZERO;
    for e in p {
        let mut idx = e.clone();
        idx.sort_unstable();
        let mut u: Vec<usize> = idx.iter().flat_map(|&k| sets[k].clone()).collect();
        u.sort_unstable();
        u.dedup();
        for &k in idx.iter().rev() {
            sets.remove(k);
        }
        let keep: Vec<usize> = u
            .iter()
            .copied()
            .filter(|l| n.output.contains(l) || sets.iter().any(|s| s.contains(l)))
            .collect();
        total += path::flop_count(&u, keep.len() < u.len(), e.len(), &n.sizes);
        sets.push(keep);
    }
    total
}

/// Every pairwise linear path over `k` operands.
fn all_paths(k: usize) -> Vec<Vec<Vec<usize>>> {
    if k == 1 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for i in 0..k {
        for j in i + 1..k {
            for mut rest in all_paths(k - 1) {
                rest.insert(0, vec![i, j]);
                out.push(rest);
            }
        }
    }
    out
}

#[test]
fn costs_past_2_128_keep_their_order() {
    // matrix chains with sizes up to 2^62: every pairwise step costs more than 2^128 in some
    // of them, where a saturating cost made all orders tie
    let e = |k: u32| (1usize << k) + 3;
    let chains: [&[usize]; 4] = [
        &[4, 1 << 62, 1 << 62, 1 << 62, 4],
        &[e(62), e(3), e(61), e(60), e(2), e(62)],
        &[e(40), e(62), e(62), e(1), e(62), e(50)],
        &[e(62), e(61), e(60), e(59), e(58), e(62)],
    ];
    let letters = ['a', 'b', 'c', 'd', 'e', 'f'];
    let mut past = 0;
    for dims in chains {
        let k = dims.len() - 1;
        let terms: Vec<String> = (0..k)
            .map(|i| [letters[i], letters[i + 1]].iter().collect())
            .collect();
        let term_refs: Vec<&str> = terms.iter().map(|s| s.as_str()).collect();
        let out: String = [letters[0], letters[k]].iter().collect();
        let sizes: Vec<(char, usize)> = (0..=k).map(|i| (letters[i], dims[i])).collect();
        let n = net(&term_refs, &out, &sizes);
        let best = all_paths(k)
            .iter()
            .map(|p| cost_scale_free(&n, p))
            .min()
            .unwrap();
        past += usize::from(best.as_exact().is_none());
        let greedy = cost_scale_free(&n, &path::greedy(&n));
        for p in [
            path::optimal(&n, Minimize::Flops).unwrap(),
            path::dp(&n, Minimize::Flops).unwrap(),
        ] {
            let c = cost_scale_free(&n, &p);
            assert!(c.log2() <= best.log2() + 1e-9, "{dims:?}: {c} vs {best}");
            assert!(
                c.log2() <= greedy.log2() + 1e-9,
                "{dims:?}: {c} vs greedy {greedy}"
            );
        }
        let opts = tenferro_einsum::AnnealOptions {
            seed: 0,
            max_time: None,
            max_repeats: 2,
        };
        let a = tenferro_einsum::anneal::anneal(
            &n,
            &opts,
            Minimize::Flops,
            &tenferro_einsum::anneal::Probe::default(),
        );
        assert!(
            cost_scale_free(&n, &a).log2() <= greedy.log2() + 1e-9,
            "{dims:?}"
        );
    }
    assert!(past >= 2, "{past} chains cost more than 2^128 at best");
}
