//! Indexing: gather/scatter, index_select/add/copy/fill/put, masked ops, nonzero, take, tensor indexing.
