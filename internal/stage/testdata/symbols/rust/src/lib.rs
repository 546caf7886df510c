//! Carts. fn NotAFunction() {}
use std::fmt;

pub const MAX_ITEMS: usize = 50;
static GREETING: &str = "struct NotAStruct {";

/// A cart.
#[derive(Debug, Default)]
pub struct Cart {
    items: Vec<String>,
}

pub enum Status { Open, Closed }

pub trait Priced {
    fn unit_price(&self) -> u32;
}

impl Cart {
    pub fn new_cart() -> Self {
        Cart::default()
    }

    pub fn add_item(&mut self, name: &str) {
        let _open = '{';
        self.items.push(name.to_string());
    }
}

impl<'a> fmt::Display for Cart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} items}}", self.items.len())
    }
}

pub(crate) fn load_cart() -> Cart {
    fn helper_inner() {}
    helper_inner();
    Cart::new_cart()
}

pub mod pricing {
    pub fn base_price() -> u32 {
        3
    }
}

macro_rules! cart_of {
    () => {
        Cart::new_cart()
    };
}
