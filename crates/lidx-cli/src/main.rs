//! `lidx`: the command line of lidx (to be written).

fn main() {}
