//! sysbench-tpcc's nine tables in InnoDB: their record sizes, row counts and indexes, how
//! `prepare` leaves them, and where a row's key sits in each index (the position the
//! layout's B+tree paths take).
//!
//! Mechanism. Every table set `i` (`--tables`) holds the nine tables, each with all
//! `--scale` warehouses. `prepare` loads each warehouse's rows in primary-key order
//! (tpcc_common.lua `load_tables`: customer by (d, c), orders by (d, o_id), stock by
//! s_i_id, order_line by (d, o_id, ol_number)), so every clustered index is filled in key
//! order and its leaves end 15/16 full (`btree::LeafFill::Sequential`). The six secondary
//! indexes are created on the empty tables (`create_tables`) and maintained row by row;
//! four of them receive their entries out of key order (idx_customer: c_last order is not
//! c_id order; idx_orders: o_c_id is a permutation; fkey_order_line_2: random ol_i_id;
//! fkey_stock_2: (s_i_id, s_w_id) interleaves warehouses), so their leaves are left about
//! ln 2 = 0.69 full ([`RANDOM_FILL`]); the history indexes are in order within a warehouse.
//!
//! The run's inserts append: orders, new_orders and order_line at the end of their
//! district's key range, history (clustered on the hidden DB_ROW_ID) at the end of the
//! whole index. When the last leaf of a district's range is full the insert splits it at
//! the insertion point (`btr_page_get_split_rec_to_right`) and the new row starts a new
//! leaf, allocated at the end of the segment: new leaves of all districts interleave in
//! the file in the order they fill.
//!
//! Sources (facts, not code): Percona-Lab/sysbench-tpcc 585e2b8 (2022-04-05)
//! `tpcc_common.lua`: `create_tables` 145-369 (the columns and types below, the PRIMARY
//! KEYs, the six `CREATE INDEX` on empty tables 350-356, no ROW_FORMAT nor charset: the
//! server's DYNAMIC and default charset), `load_tables` 406-601 (per warehouse, in this
//! order: warehouse, 10 districts, customers by (d, c), history by (d, c), orders by
//! (d, o_id) with o_carrier_id set below 2101, stock by s_i_id, new_orders = orders with
//! o_id > 2100, order_line by (d, o_id, ol_number) with U(5,15) lines an order; 100,000
//! items per set, `MAXITEMS` line 40), `Lastname` 626-632, `NURand` 639-666. InnoDB's
//! COMPACT/DYNAMIC record: 5-byte header + NULL bitmap (a bit a nullable column) + a
//! length byte a non-NULL variable column (two for a TEXT over 127 bytes; CHAR(n) is
//! variable, with its length byte, under a multi-byte charset) + the key + DB_TRX_ID 6 +
//! DB_ROLL_PTR 7 + the other non-NULL columns (tinyint 1, smallint 2, int 4, bigint 8,
//! datetime 5, dec(4,2) 2, dec(5,2) 3, dec(6,2) 3, dec(8,0) 4, dec(12,2) 6, strings their
//! ASCII length as the loader writes them); a secondary entry: header + bitmap + lengths +
//! key + the PK columns not in the key, no system columns. The MySQL manual, "The
//! Physical Structure of an InnoDB Index" (15/16 full for sequential inserts, 1/2 to
//! 15/16 for random ones).
//!
//! Record sizes (bytes, latin1 / utf8mb4; the note's §1 table): warehouse 105/107,
//! district 111/113, customer 572/577, history 62 (loaded rows; run-time rows 68),
//! orders 38 (carrier set, o_id < 2101) / 37 (NULL), mean 37.7 -> 38, new_orders 25,
//! order_line 66 delivered / 61 undelivered (utf8mb4 67 / 62), mean 64.5 -> 65 (66),
//! stock 315/325, item 92. Secondary entries: idx_customer 39, idx_orders 17,
//! fkey_stock_2 11, fkey_order_line_2 20, fkey_history_1 19, fkey_history_2 15.
//!
//! Simplifications:
//! 1. One load stream: the warehouses are laid out one after the other in key order (a
//!    prepare with `--threads` > 1 interleaves their leaves in the file; not modelled).
//! 2. Growth is laid out in advance: each growing table's file holds, after the loaded
//!    leaves, leaves for `order_capacity` - 3000 more orders per district (order_line: 10
//!    lines an order; history: as many rows as orders), district `j`'s `n`-th new leaf at
//!    `loaded_leaves + n * districts + j` (districts are drawn uniformly, so their n-th
//!    leaves fill at about the same time, the order InnoDB allocates them in). The files
//!    are that large from the start (their unwritten pages are zeros, holes under a
//!    compressing ZFS); a district past its capacity reuses its space from the start.
//!    A new leaf's first insert reads the page (InnoDB creates it in memory).
//! 3. Secondary indexes keep their loaded size: a run-time entry lands at its key's
//!    position among the loaded entries (the split pages random inserts add are not laid
//!    out).
//! 4. order_line: every order takes 10 positions (the mean of U(5,15) lines); an order's
//!    lines start at 10 x its rank in the district, so an order of more than 10 lines
//!    overlaps its successor's first leaf positions.
//! 5. idx_customer: one load-time C_255 for all warehouses (each loading thread draws its
//!    own); a last name's customers in a district are its expected count (1 among c_id
//!    1..1000, plus 2000 x its NURand probability), in the names' sorted order.
//! 6. Records have their mean size (the ones that grow when delivered or paid keep it).

use super::btree::{IndexSpec, LeafFill, TableLayout};
use crate::config::CharacterSet;

/// Expected fill of leaves grown by random-order inserts (ln 2, the manual's 1/2 to 15/16).
pub const RANDOM_FILL: f64 = std::f64::consts::LN_2;
/// Customers per district (tpcc_common.lua `load_tables`: c_id 1..3000).
pub const CUSTOMERS: u64 = 3000;
/// Orders per district at load (o_id 1..3000; new_orders holds 2101..3000).
pub const ORDERS: u64 = 3000;
/// First undelivered order at load.
pub const FIRST_NEW_ORDER: u64 = 2101;
/// Items (`MAXITEMS`, tpcc_common.lua:40), independent of scale.
pub const ITEMS: u64 = 100_000;
/// Order lines an order takes in the layout (the mean of U(5,15), simplification 4).
pub const LINES_PER_ORDER: u64 = 10;
/// Districts per warehouse.
pub const DISTRICTS: u64 = 10;

/// The nine tables of a set, in creation order (`create_tables`). A dataset's table `t`
/// is set `t / 9`'s table `t % 9`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TpccTable {
    /// warehouse, PK (w_id).
    Warehouse = 0,
    /// district, PK (d_w_id, d_id).
    District,
    /// customer, PK (c_w_id, c_d_id, c_id); idx_customer (c_w_id, c_d_id, c_last, c_first).
    Customer,
    /// history, hidden DB_ROW_ID; fkey_history_1 (h_c_w_id, h_c_d_id, h_c_id),
    /// fkey_history_2 (h_w_id, h_d_id).
    History,
    /// orders, PK (o_w_id, o_d_id, o_id); idx_orders (o_w_id, o_d_id, o_c_id, o_id).
    Orders,
    /// new_orders, PK (no_w_id, no_d_id, no_o_id).
    NewOrders,
    /// order_line, PK (ol_w_id, ol_d_id, ol_o_id, ol_number); fkey_order_line_2
    /// (ol_supply_w_id, ol_i_id).
    OrderLine,
    /// stock, PK (s_w_id, s_i_id); fkey_stock_2 (s_i_id).
    Stock,
    /// item, PK (i_id).
    Item,
}

impl TpccTable {
    /// The nine in creation order.
    pub const ALL: [TpccTable; 9] = [
        TpccTable::Warehouse,
        TpccTable::District,
        TpccTable::Customer,
        TpccTable::History,
        TpccTable::Orders,
        TpccTable::NewOrders,
        TpccTable::OrderLine,
        TpccTable::Stock,
        TpccTable::Item,
    ];

    /// The table's name without its set suffix.
    pub fn name(self) -> &'static str {
        [
            "warehouse",
            "district",
            "customer",
            "history",
            "orders",
            "new_orders",
            "order_line",
            "stock",
            "item",
        ][self as usize]
    }

    /// Table `t` of a dataset: its set (0-based) and kind.
    pub fn of(t: u32) -> (u32, TpccTable) {
        (t / 9, TpccTable::ALL[(t % 9) as usize])
    }

    /// The dataset's table number of this kind in set `set` (0-based).
    #[inline]
    pub fn in_set(self, set: u32) -> u32 {
        set * 9 + self as u32
    }

    /// File name of this table in set `set` (0-based): `orders1.ibd` for set 0.
    pub fn file_name(self, set: u32) -> String {
        format!("{}{}", self.name(), set + 1)
    }

    /// Rows per set at load, `scale` warehouses (order_line: 10 a order, the mean).
    pub fn loaded_rows(self, scale: u64) -> u64 {
        match self {
            TpccTable::Warehouse => scale,
            TpccTable::District => DISTRICTS * scale,
            TpccTable::Customer | TpccTable::History | TpccTable::Orders => DISTRICTS * CUSTOMERS * scale,
            TpccTable::NewOrders => DISTRICTS * (ORDERS - FIRST_NEW_ORDER + 1) * scale,
            TpccTable::OrderLine => DISTRICTS * ORDERS * LINES_PER_ORDER * scale,
            TpccTable::Stock => ITEMS * scale,
            TpccTable::Item => ITEMS,
        }
    }

    /// Mean clustered leaf record, bytes (module doc).
    pub fn clustered_rec(self, cs: CharacterSet) -> u64 {
        let u = u64::from(cs == CharacterSet::Utf8mb4);
        match self {
            TpccTable::Warehouse => 105 + 2 * u,
            TpccTable::District => 111 + 2 * u,
            TpccTable::Customer => 572 + 5 * u,
            TpccTable::History => 62,
            TpccTable::Orders => 38,
            TpccTable::NewOrders => 25,
            TpccTable::OrderLine => 65 + u,
            TpccTable::Stock => 315 + 10 * u,
            TpccTable::Item => 92,
        }
    }

    /// Bytes of the primary key's columns (history: the 6-byte DB_ROW_ID).
    pub fn key_bytes(self) -> u64 {
        match self {
            TpccTable::Warehouse => 2,
            TpccTable::District => 3,
            TpccTable::Customer | TpccTable::Orders | TpccTable::NewOrders => 7,
            TpccTable::History | TpccTable::Stock => 6,
            TpccTable::OrderLine => 8,
            TpccTable::Item => 4,
        }
    }

    /// The secondary indexes as (leaf entry bytes, fill at load), creation order.
    pub fn secondaries(self) -> &'static [(u64, LeafFill)] {
        const R: LeafFill = LeafFill::Random(RANDOM_FILL);
        match self {
            TpccTable::Customer => &[(39, R)],
            TpccTable::Orders => &[(17, R)],
            TpccTable::Stock => &[(11, R)],
            TpccTable::OrderLine => &[(20, R)],
            TpccTable::History => &[(19, LeafFill::Sequential), (15, LeafFill::Sequential)],
            TpccTable::Warehouse | TpccTable::District | TpccTable::NewOrders | TpccTable::Item => &[],
        }
    }

    /// Rows the run appends per district and order, and rows loaded per district, for a
    /// table that grows (None: it does not).
    fn growth(self) -> Option<(u64, u64)> {
        match self {
            TpccTable::Orders => Some((1, ORDERS)),
            TpccTable::NewOrders => Some((1, ORDERS - FIRST_NEW_ORDER + 1)),
            TpccTable::OrderLine => Some((LINES_PER_ORDER, ORDERS * LINES_PER_ORDER)),
            // history: one global stream, as large as the orders' growth.
            TpccTable::History => Some((1, CUSTOMERS)),
            _ => None,
        }
    }

    /// The clustered index's spec for `rows` positions.
    fn clustered_spec(self, cs: CharacterSet, rows: u64) -> IndexSpec {
        IndexSpec {
            rec: self.clustered_rec(cs),
            node_ptr: super::page_image::REC_N_NEW_EXTRA_BYTES as u64 + self.key_bytes() + 4,
            rows,
            fill: LeafFill::Sequential,
        }
    }
}

/// Where every key of a TPC-C dataset's tables sits: positions (1-based, key order as
/// laid out) in each index, and the nine layouts.
#[derive(Debug, Clone)]
pub struct TpccKeys {
    /// Warehouses per set.
    pub scale: u64,
    /// Orders per district the growing tables hold (loaded included).
    pub order_capacity: u64,
    /// Clustered records per leaf of each table (page size and charset applied).
    per_leaf: [u64; 9],
    /// Leaves the load fills, per table (growing tables: rounded up to whole leaves).
    loaded_leaves: [u64; 9],
    /// idx_customer: first position of each last name (0..999) within a district, and its
    /// customers: `name_start[n]..name_start[n] + name_count[n]`.
    name_start: Vec<u16>,
    name_count: Vec<u8>,
}

impl TpccKeys {
    /// The keys of `scale` warehouses with files for `order_capacity` orders per district,
    /// `innodb_page_size` = `page_size`, `charset`; `load_c255`: the load's NURand C for
    /// last names (simplification 5).
    pub fn new(
        scale: u32,
        order_capacity: u32,
        page_size: u32,
        charset: CharacterSet,
        load_c255: u64,
    ) -> TpccKeys {
        let scale = u64::from(scale.max(1));
        let ps = u64::from(page_size);
        let mut per_leaf = [0u64; 9];
        let mut loaded_leaves = [0u64; 9];
        for t in TpccTable::ALL {
            let spec = t.clustered_spec(charset, 1);
            per_leaf[t as usize] = spec.recs_per_leaf(ps);
            loaded_leaves[t as usize] = t.loaded_rows(scale).div_ceil(per_leaf[t as usize]);
        }
        let (name_start, name_count) = last_name_ranges(load_c255);
        TpccKeys {
            scale,
            order_capacity: u64::from(order_capacity).max(ORDERS),
            per_leaf,
            loaded_leaves,
            name_start,
            name_count,
        }
    }

    /// Districts per set.
    #[inline]
    pub fn districts(&self) -> u64 {
        DISTRICTS * self.scale
    }

    /// Orders per district past the load the growing tables hold.
    #[inline]
    pub fn growth_orders(&self) -> u64 {
        self.order_capacity - ORDERS
    }

    /// Leaves of the growth area of table `t` (0 for a table that does not grow).
    fn growth_leaves(&self, t: TpccTable) -> u64 {
        let Some((per_order, _)) = t.growth() else { return 0 };
        let per = self.per_leaf[t as usize];
        let rows = self.growth_orders() * per_order;
        if t == TpccTable::History {
            (rows * self.districts()).div_ceil(per)
        } else {
            rows.div_ceil(per) * self.districts()
        }
    }

    /// Clustered positions of table `t` as laid out (loaded leaves and growth area).
    pub fn clustered_rows(&self, t: TpccTable) -> u64 {
        if t.growth().is_some() {
            (self.loaded_leaves[t as usize] + self.growth_leaves(t)) * self.per_leaf[t as usize]
        } else {
            t.loaded_rows(self.scale)
        }
    }

    /// The nine tables' layouts (a set's; every set is alike).
    pub fn layouts(&self, page_size: u32, charset: CharacterSet) -> Vec<TableLayout> {
        TpccTable::ALL
            .iter()
            .map(|&t| {
                let clustered = t.clustered_spec(charset, self.clustered_rows(t));
                let secs: Vec<IndexSpec> = t
                    .secondaries()
                    .iter()
                    .map(|&(rec, fill)| IndexSpec {
                        rec,
                        node_ptr: rec + 4,
                        rows: t.loaded_rows(self.scale),
                        fill,
                    })
                    .collect();
                TableLayout::with_indexes(&clustered, &secs, page_size)
            })
            .collect()
    }

    /// District index (0-based) of warehouse `w` (1-based), district `d` (1-based).
    #[inline]
    pub fn district(&self, w: u64, d: u64) -> u64 {
        (w - 1) * DISTRICTS + (d - 1)
    }

    /// Position of the `g`-th (0-based) row appended to district `j` of growing table `t`
    /// (simplification 2; a ring past the capacity).
    #[inline]
    fn grown(&self, t: TpccTable, j: u64, g: u64) -> u64 {
        let per = self.per_leaf[t as usize];
        let (per_order, _) = t.growth().unwrap_or((1, 0));
        let cap = (self.growth_orders() * per_order).max(1);
        let g = g % cap;
        let leaf = self.loaded_leaves[t as usize] + (g / per) * self.districts() + j;
        leaf * per + g % per + 1
    }

    /// warehouse (w).
    #[inline]
    pub fn warehouse(&self, w: u64) -> u64 {
        w
    }

    /// district (w, d).
    #[inline]
    pub fn district_row(&self, w: u64, d: u64) -> u64 {
        self.district(w, d) + 1
    }

    /// customer (w, d, c).
    #[inline]
    pub fn customer(&self, w: u64, d: u64, c: u64) -> u64 {
        self.district(w, d) * CUSTOMERS + c
    }

    /// stock (w, i).
    #[inline]
    pub fn stock(&self, w: u64, i: u64) -> u64 {
        (w - 1) * ITEMS + i
    }

    /// item (i).
    #[inline]
    pub fn item(&self, i: u64) -> u64 {
        i
    }

    /// orders (w, d, o).
    #[inline]
    pub fn orders(&self, w: u64, d: u64, o: u64) -> u64 {
        let j = self.district(w, d);
        if o <= ORDERS {
            j * ORDERS + o
        } else {
            self.grown(TpccTable::Orders, j, o - ORDERS - 1)
        }
    }

    /// new_orders (w, d, o), o >= 2101.
    #[inline]
    pub fn new_orders(&self, w: u64, d: u64, o: u64) -> u64 {
        let j = self.district(w, d);
        let loaded = ORDERS - FIRST_NEW_ORDER + 1;
        if o <= ORDERS {
            j * loaded + o.saturating_sub(FIRST_NEW_ORDER) + 1
        } else {
            self.grown(TpccTable::NewOrders, j, o - ORDERS - 1)
        }
    }

    /// order_line (w, d, o, ol), ol 1-based (simplification 4).
    #[inline]
    pub fn order_line(&self, w: u64, d: u64, o: u64, ol: u64) -> u64 {
        let j = self.district(w, d);
        let per_district = ORDERS * LINES_PER_ORDER;
        if o <= ORDERS {
            (j * per_district + (o - 1) * LINES_PER_ORDER + ol).min((j + 1) * per_district)
        } else {
            let slot = (o - ORDERS - 1) * LINES_PER_ORDER + (ol - 1).min(LINES_PER_ORDER - 1);
            self.grown(TpccTable::OrderLine, j, slot)
        }
    }

    /// history's `n`-th appended row (0-based): the end of the hidden row-id index.
    #[inline]
    pub fn history_append(&self, n: u64) -> u64 {
        let t = TpccTable::History;
        let per = self.per_leaf[t as usize];
        let cap = (self.growth_leaves(t) * per).max(1);
        self.loaded_leaves[t as usize] * per + n % cap + 1
    }

    /// idx_customer: the first entry of last name `name` (0..999) in (w, d) and how many
    /// customers of the district have it.
    #[inline]
    pub fn customer_by_name(&self, w: u64, d: u64, name: u64) -> (u64, u64) {
        let n = name.min(999) as usize;
        let pos = self.district(w, d) * CUSTOMERS + u64::from(self.name_start[n]) + 1;
        (pos, u64::from(self.name_count[n]))
    }

    /// The id of the `k`-th (0-based) customer with last name `name`: the one with
    /// c_id = name + 1 first, then ids spread over 1001..3000 (deterministic).
    #[inline]
    pub fn customer_with_name(&self, name: u64, k: u64) -> u64 {
        if k == 0 {
            name.min(999) + 1
        } else {
            1001 + (name * 7919 + k * 104_729) % 2000
        }
    }

    /// idx_orders: the entry of (w, d, c) (its orders' first).
    #[inline]
    pub fn orders_by_customer(&self, w: u64, d: u64, c: u64) -> u64 {
        self.district(w, d) * CUSTOMERS + c
    }

    /// fkey_order_line_2: the entry (supply w, item i) lands at.
    #[inline]
    pub fn order_line_by_item(&self, w: u64, i: u64) -> u64 {
        let per_w = DISTRICTS * ORDERS * LINES_PER_ORDER;
        (w - 1) * per_w + ((i - 1) * per_w) / ITEMS + 1
    }

    /// fkey_history_1: the entry of customer (w, d, c).
    #[inline]
    pub fn history_by_customer(&self, w: u64, d: u64, c: u64) -> u64 {
        self.customer(w, d, c)
    }

    /// fkey_history_2: the end of (w, d)'s entries, where a new one lands.
    #[inline]
    pub fn history_by_district(&self, w: u64, d: u64) -> u64 {
        (self.district(w, d) + 1) * CUSTOMERS
    }
}

/// sysbench-tpcc's `Lastname(num)` (tpcc_common.lua:626-632): three syllables, by num's
/// hundreds, tens and units digits.
pub fn last_name(num: u64) -> String {
    const S: [&str; 10] = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];
    let n = num.min(999) as usize;
    format!("{}{}{}", S[n / 100], S[(n / 10) % 10], S[n % 10])
}

/// P(NURand(255, 0, 999) = n) for constant `c`: over the 256 x 1000 equally likely
/// (U(0,255), U(0,999)) pairs, `((a | b) + c) % 1000`.
pub fn nurand_255_pmf(c: u64) -> Vec<f64> {
    let mut counts = vec![0u32; 1000];
    for a in 0..=255u64 {
        for b in 0..=999u64 {
            counts[(((a | b) + c) % 1000) as usize] += 1;
        }
    }
    counts.iter().map(|&k| f64::from(k) / 256_000.0).collect()
}

/// Each last name's first position (0-based) among a district's 3000 customers sorted by
/// name, and its count: 1 (c_id = n + 1 for c_id <= 1000) plus its share of the 2000
/// customers whose name is Lastname(NURand(255, 0, 999)) with the load's `c`, rounded so
/// the counts sum to 3000.
fn last_name_ranges(c: u64) -> (Vec<u16>, Vec<u8>) {
    let pmf = nurand_255_pmf(c);
    let mut names: Vec<(String, usize)> = (0..1000).map(|n| (last_name(n as u64), n)).collect();
    names.sort();
    let mut start = vec![0u16; 1000];
    let mut count = vec![0u8; 1000];
    let (mut cum_p, mut pos) = (0.0f64, 0u64);
    for (rank, (_, n)) in names.iter().enumerate() {
        cum_p += pmf[*n];
        let end = (rank as u64 + 1) + (2000.0 * cum_p).round() as u64;
        start[*n] = pos as u16;
        count[*n] = (end - pos).min(255) as u8;
        pos = end;
    }
    (start, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row counts per set are the loader's (tpcc_common.lua): scale, 10·scale,
    /// 30,000·scale, 9,000·scale new orders, 10 lines an order, 100,000·scale stock and
    /// 100,000 items whatever the scale.
    #[test]
    fn row_counts_follow_the_loader() {
        for s in [1u64, 7, 100] {
            let r = |t: TpccTable| t.loaded_rows(s);
            assert_eq!(r(TpccTable::Warehouse), s);
            assert_eq!(r(TpccTable::District), 10 * s);
            assert_eq!(r(TpccTable::Customer), 30_000 * s);
            assert_eq!(r(TpccTable::History), 30_000 * s);
            assert_eq!(r(TpccTable::Orders), 30_000 * s);
            assert_eq!(r(TpccTable::NewOrders), 9_000 * s);
            assert_eq!(r(TpccTable::OrderLine), 300_000 * s);
            assert_eq!(r(TpccTable::Stock), 100_000 * s);
            assert_eq!(r(TpccTable::Item), 100_000);
        }
    }

    /// The record sizes are the note's formula: header 5 + bitmap + length bytes + data +
    /// DB_TRX_ID 6 + DB_ROLL_PTR 7 (data bytes and bitmap/length bytes from the note).
    #[test]
    fn record_sizes_follow_the_record_format() {
        let rec = |data: u64, bitmap: u64, lens: u64| 5 + bitmap + lens + data + 13;
        let l = CharacterSet::Latin1;
        assert_eq!(TpccTable::Warehouse.clustered_rec(l), rec(82, 1, 4));
        assert_eq!(TpccTable::District.clustered_rec(l), rec(87, 2, 4));
        assert_eq!(TpccTable::Customer.clustered_rec(l), rec(544, 3, 7));
        assert_eq!(TpccTable::History.clustered_rec(l), rec(42, 1, 1));
        assert_eq!(TpccTable::Orders.clustered_rec(l), rec(19, 1, 0));
        assert_eq!(TpccTable::NewOrders.clustered_rec(l), rec(7, 0, 0));
        assert_eq!(TpccTable::Stock.clustered_rec(l), rec(294, 2, 1));
        // order_line: 70% delivered (66), 30% not (61).
        assert_eq!(TpccTable::OrderLine.clustered_rec(l), 65);
        // utf8mb4 gives CHAR(n) a length byte: stock's 11 CHAR columns less its one
        // VARCHAR's byte it already had.
        assert_eq!(TpccTable::Stock.clustered_rec(CharacterSet::Utf8mb4), rec(294, 2, 11));
        // Secondary entries: header 5 + bitmap + lengths + key + missing PK columns.
        let sec: Vec<u64> = TpccTable::ALL.iter().flat_map(|t| t.secondaries().iter().map(|s| s.0)).collect();
        assert_eq!(sec, vec![39, 19, 15, 17, 20, 11]);
    }

    /// The layouts: rows per leaf from the record sizes (stock 315 bytes: 48 a 16 KiB leaf
    /// at 15/16), the random-order secondaries at about ln 2 of a full leaf, and the set's
    /// size near the note's estimate of 87 MiB a warehouse (before growth space).
    #[test]
    fn layouts_and_sizes() {
        let k = TpccKeys::new(10, 3000, 16384, CharacterSet::Latin1, 77);
        let l = k.layouts(16384, CharacterSet::Latin1);
        assert_eq!(l.len(), 9);
        let stock = &l[TpccTable::Stock as usize];
        assert_eq!(stock.clustered.recs_per_leaf, 48);
        assert_eq!(stock.rows, 1_000_000);
        let full = crate::db::innodb::btree::records_per_page(16384, 11, 0) as f64;
        let fk = stock.secondary().recs_per_leaf as f64;
        assert!((fk / full - RANDOM_FILL).abs() < 0.01, "{fk} of {full}");
        assert_eq!(l[TpccTable::History as usize].secondaries.len(), 2);
        assert!(l[TpccTable::Item as usize].secondaries.is_empty());
        let data: u64 = l.iter().map(|t| t.data_pages() * 16384).sum();
        let per_w = (data as f64 - 9.5 * 1048576.0) / 10.0 / 1048576.0;
        assert!((per_w / 87.0 - 1.0).abs() < 0.1, "{per_w} MiB a warehouse");
    }

    /// The growth area: an order past the load lands after the loaded leaves, district
    /// j's n-th new leaf at loaded + n·districts + j, and rows of one district fill their
    /// leaf in order; the capacity is a ring.
    #[test]
    fn appended_rows_land_past_the_loaded_leaves() {
        let k = TpccKeys::new(2, 6000, 16384, CharacterSet::Latin1, 1);
        let t = TpccTable::Orders;
        let per = k.per_leaf[t as usize];
        let loaded_end = k.loaded_leaves[t as usize] * per;
        let first = k.orders(1, 1, 3001);
        assert_eq!(first, loaded_end + 1);
        assert_eq!(k.orders(1, 1, 3002), first + 1);
        assert_eq!(k.orders(1, 2, 3001), loaded_end + per + 1, "district 2's first new leaf");
        assert_eq!(k.orders(1, 1, 3001 + per), loaded_end + 20 * per + 1, "district 1's second");
        assert_eq!(k.orders(1, 1, 3001 + 3000), first, "past the capacity: the ring");
        assert!(k.orders(2, 10, 6000) <= k.clustered_rows(t));
        // Loaded rows stay in PK order per district.
        assert_eq!(k.orders(1, 2, 1), 3001);
        assert_eq!(k.new_orders(1, 1, 2101), 1);
        assert_eq!(k.new_orders(1, 2, 2101), 901);
        let h0 = k.history_append(0);
        assert_eq!(
            h0,
            k.loaded_leaves[TpccTable::History as usize] * k.per_leaf[TpccTable::History as usize] + 1
        );
        assert_eq!(k.history_append(1), h0 + 1);
    }

    /// Last names: 1000 distinct names, their ranges partition a district's 3000
    /// customers, and NURand(255)'s skew shows (some names far more frequent).
    #[test]
    fn last_name_ranges_partition_the_district() {
        let k = TpccKeys::new(1, 3000, 16384, CharacterSet::Latin1, 123);
        let mut spans: Vec<(u64, u64)> = (0..1000).map(|n| k.customer_by_name(1, 1, n)).collect();
        spans.sort();
        let mut next = 1;
        for (p, c) in &spans {
            assert_eq!(*p, next);
            assert!(*c >= 1);
            next += c;
        }
        assert_eq!(next, 3001);
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        let pmf = nurand_255_pmf(123);
        assert!((pmf.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let max = pmf.iter().cloned().fold(0.0, f64::max);
        assert!(max > 3.0 / 1000.0, "{max}");
    }
}
