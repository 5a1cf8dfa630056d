//! Statistical reductions: std, var, norm, logsumexp, median, mode, quantile, count_nonzero.
