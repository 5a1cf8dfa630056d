//! Ordering: sort, argsort, topk, kthvalue, unique, searchsorted, bucketize, histc, bincount, cumulative scans.
