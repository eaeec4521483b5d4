//! The few statistics the analysis takes of its rows: groups in key order (pandas' `groupby`
//! sorts its keys; items inside a group keep their order), distinct values, mean, sample
//! standard deviation, extremes and median.

use std::collections::BTreeMap;

/// `items` grouped by `key`, in key order; each group keeps the items' order.
pub fn group_by<'a, T, K: Ord>(
    items: impl IntoIterator<Item = &'a T>,
    key: impl Fn(&'a T) -> K,
) -> BTreeMap<K, Vec<&'a T>>
where
    T: 'a,
{
    let mut groups: BTreeMap<K, Vec<&T>> = BTreeMap::new();
    for item in items {
        groups.entry(key(item)).or_default().push(item);
    }
    groups
}

/// The distinct values of `values`, sorted.
pub fn distinct<T: Ord>(values: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut values: Vec<T> = values.into_iter().collect();
    values.sort_unstable();
    values.dedup();
    values
}

pub fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Sample standard deviation (pandas' `std`, ddof = 1); none below two values.
pub fn std(v: &[f64]) -> Option<f64> {
    let m = mean(v)?;
    (v.len() >= 2)
        .then(|| (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt())
}

pub fn min(v: &[f64]) -> Option<f64> {
    v.iter().copied().reduce(f64::min)
}

pub fn max(v: &[f64]) -> Option<f64> {
    v.iter().copied().reduce(f64::max)
}

/// The median, NaN of no values.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
