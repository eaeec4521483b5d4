//! Reading the ranks side by side: a fixed number of worker threads take the files one at a
//! time, so a job of a thousand ranks holds at most that many traces in memory at once (each
//! worker reduces its trace to what the result needs, a signature file or a prediction, before
//! it takes the next).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many ranks are read at once: the machine's cores, at most `items`.
pub fn workers_for(items: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(items).max(1)
}

/// `work` on every item, `workers` at a time; the results in the items' order, or the error
/// of the first item (in the items' order) that failed.
pub fn map_bounded<T, R, E, F>(items: &[T], workers: usize, work: F) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    F: Fn(&T) -> Result<R, E> + Sync,
{
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(usize::MAX);
    let slots: Mutex<Vec<Option<Result<R, E>>>> =
        Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers.max(1).min(items.len().max(1)) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                // After a failure, the items past it are not worth reading.
                if index >= items.len() || index > failed.load(Ordering::Relaxed) {
                    break;
                }
                let result = work(&items[index]);
                if result.is_err() {
                    failed.fetch_min(index, Ordering::Relaxed);
                }
                if let Ok(mut slots) = slots.lock() {
                    slots[index] = Some(result);
                }
            });
        }
    });
    let slots = slots.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut results = Vec::with_capacity(items.len());
    for slot in slots {
        match slot {
            Some(Ok(result)) => results.push(result),
            Some(Err(error)) => return Err(error),
            // Skipped after an earlier failure, which the loop has returned already.
            None => break,
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_items_order_and_the_first_failure_wins() {
        let items: Vec<u32> = (0..50).collect();
        let doubled = map_bounded(&items, 4, |&i| Ok::<_, String>(i * 2)).unwrap();
        assert_eq!(doubled, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        let err = map_bounded(&items, 3, |&i| {
            if i == 7 || i == 30 {
                Err(format!("item {i}"))
            } else {
                Ok(i)
            }
        })
        .unwrap_err();
        assert_eq!(err, "item 7");
        assert!(map_bounded(&[] as &[u32], 2, |&i| Ok::<_, String>(i))
            .unwrap()
            .is_empty());
    }
}
