//! Percona-Lab/sysbench-tpcc's run (`tpcc.lua` `event()`, `tpcc_run.lua`) as the index
//! lookups InnoDB performs for its five transactions.
//!
//! Mechanism. Each event draws its type, `trx_type = sysbench.rand.uniform(1, 23)`:
//! 1-10 new_order, 11-20 payment, 21 order_status, 22 delivery, 23 stock_level (`--enable_purge`
//! is off by default and not modelled), then a table set `U(1, tables)`, a warehouse
//! `U(1, scale)` and a district `U(1, 10)`, uniformly and independently. Every transaction
//! is `BEGIN`, its statements, `COMMIT` (sysbench counts BEGIN and COMMIT as queries, and
//! each event as a transaction: tps is over all five types). The statements, as the WHERE
//! clauses and the indexes make InnoDB run them (the optimizer's plan assumed):
//! - new_order: ol_cnt = U(5,15) lines, c_id = NURand(1023, 1, 3000). customer ⋈ warehouse
//!   (two PK points); district `FOR UPDATE` (PK point), `UPDATE district` d_next_o_id;
//!   `INSERT orders` (at the end of the district's range, and idx_orders at the
//!   customer's entry); `INSERT new_orders` (end of the district's range); per line, item
//!   PK point (i = NURand(8191, 1, 100000)), stock `FOR UPDATE` PK point, `UPDATE stock`
//!   s_quantity (in place), `INSERT order_line` (end of the order, and fkey_order_line_2
//!   at (w, i)). With `rbk = U(1,100) = 1` (1%) the item of line ol_cnt - 1 is -1: that
//!   item SELECT finds nothing, the transaction rolls back and returns normally (sysbench
//!   counts it as an event and an error).
//! - payment: `UPDATE warehouse` w_ytd (the hottest row), its SELECT, `UPDATE district`
//!   d_ytd, its SELECT; the customer by last name (60%: name = Lastname(NURand(255, 0,
//!   999)); `count(c_id)` and `SELECT c_id ... ORDER BY c_first` are both ranges of
//!   idx_customer over the name's customers, covering; the middle one is taken) or by id
//!   (NURand(1023)); the customer `FOR UPDATE` (PK point); a BC-credit customer's (10% of
//!   customers) c_data SELECT, then `UPDATE customer`; `INSERT history` (the end of the
//!   hidden row-id index, fkey_history_1 at the customer, fkey_history_2 at the end of the
//!   district's entries). 85% the customer's district is the home one, else U(1,10).
//! - order_status: the customer by name (60%: the count, then the ORDER BY c_first range
//!   with a PK lookup per row) or by id; the customer's orders through idx_orders (one PK
//!   lookup each); the order lines of order number **d_id**, not the customer's last order
//!   (tpcc_run.lua:551-553 passes d_id for ol_o_id, as coded).
//! - delivery: for each of the 10 districts, the oldest new order (`ORDER BY no_o_id LIMIT
//!   1 FOR UPDATE`, a PK-prefix range), its `DELETE`, the order's o_c_id, `UPDATE orders`
//!   o_carrier_id, `UPDATE order_line` ol_delivery_d (each of the order's lines), `SUM(ol_amount)`
//!   over them, `UPDATE customer` balance; one transaction for the ten.
//! - stock_level: district d_next_o_id (PK point), then order_line of the 20 newest orders
//!   joined with stock (a stock PK point per line), non-locking.
//!
//! No remote warehouses: `other_ware(home)` loops until it draws the home warehouse and
//! returns it (tpcc_run.lua:28-36), so the TPC-C specification's 1% remote supply and 15%
//! remote customer warehouses never happen as coded; this models the code, not the
//! specification.
//!
//! Sources: Percona-Lab/sysbench-tpcc 585e2b8 `tpcc.lua` 29-54, `tpcc_run.lua` 28-772,
//! `tpcc_common.lua` 626-666 (Lastname, NURand); akopytov/sysbench `db_driver.c`
//! 1083-1134 (tps over all events, BEGIN/COMMIT counted as queries).
//!
//! Simplifications:
//! 1. The districts' counters (d_next_o_id, the oldest undelivered order, history's row
//!    ids) are shared by the threads and advance when a transaction is generated, not
//!    when its statements run. Row locks: payment's `UPDATE warehouse` and `UPDATE
//!    district` and new_order's `UPDATE district` lock their rows to the commit
//!    (`Statement::lock_at`, `db::innodb::row_locks`), which at a small scale with many
//!    threads bounds tps; new_order's lock is taken at its UPDATE, not at the `FOR UPDATE`
//!    read just before it.
//! 2. A rollback ends the transaction as a commit of the changes made so far (their undo
//!    is not applied); the order number it took is reused by the next new_order.
//! 3. An order's line count, its customer (o_c_id), its lines' items and a customer's
//!    credit (10% BC) are hashes of the dataset seed and the key, the same for every
//!    reader; a run's order is its new_order's line count by the same hash.
//! 4. The NURand constants C are drawn once per thread (each thread's Lua state draws its
//!    own); the random stream is not sysbench's, and draws that choose no row (quantities,
//!    amounts, the `other_ware` loop) are not made.
//! 5. The other rows' locks (stock and customer `FOR UPDATE`, delivery's new_orders) are
//!    not taken (thousands of rows per warehouse; `db::innodb::row_locks` 1); a customer's orders
//!    after the first are taken as the district's run orders spaced 3000 apart.
//! 6. The layout's simplifications (`db::innodb::tpcc_schema`), and the write path's:
//!    the rows' redo and undo are sized as sysbench's (`db::innodb::writes`, 9).

use crate::config::{SysbenchWorkload, TpccDataset};
use crate::db::innodb::btree::mix;
use crate::db::innodb::tpcc_schema::{TpccKeys, TpccTable, DISTRICTS, FIRST_NEW_ORDER, ORDERS};
use crate::workload::rand::SbRand;
use crate::workload::statement::{Index, Lookup, Op, Statement};

/// Statement kinds (`Statement::kind`) of the five transactions.
pub mod kind {
    /// new_order (committed).
    pub const NEW_ORDER: u8 = 1;
    /// payment.
    pub const PAYMENT: u8 = 2;
    /// order_status.
    pub const ORDER_STATUS: u8 = 3;
    /// delivery.
    pub const DELIVERY: u8 = 4;
    /// stock_level.
    pub const STOCK_LEVEL: u8 = 5;
    /// new_order rolled back (the 1%): an event and an error for sysbench.
    pub const NEW_ORDER_ROLLBACK: u8 = 6;
    /// Names as reported, by kind - 1.
    pub const NAMES: [&str; 6] =
        ["new_order", "payment", "order_status", "delivery", "stock_level", "new_order_rollback"];
}

/// `event()`'s range: 23 without purge (tpcc.lua:31).
pub const MAX_TRX: u64 = 23;

/// The districts' counters all threads share (simplification 1).
#[derive(Debug, Clone)]
pub struct TpccState {
    /// Per (set, district): d_next_o_id.
    next_o: Vec<u32>,
    /// Per (set, district): the oldest undelivered order.
    oldest: Vec<u32>,
    /// Per set: history rows appended.
    history: Vec<u64>,
}

impl TpccState {
    /// The state `prepare` leaves: d_next_o_id 3001, new orders from 2101.
    pub fn new(sets: u32, keys: &TpccKeys) -> TpccState {
        let n = sets as usize * keys.districts() as usize;
        TpccState {
            next_o: vec![ORDERS as u32 + 1; n],
            oldest: vec![FIRST_NEW_ORDER as u32; n],
            history: vec![0; sets as usize],
        }
    }
}

/// The generators of all client threads over one dataset, with the shared counters.
#[derive(Debug, Clone)]
pub struct TpccSource {
    /// One per client thread.
    pub gens: Vec<TpccGen>,
    /// Where the keys are.
    pub keys: TpccKeys,
    /// The shared counters.
    pub state: TpccState,
}

impl TpccSource {
    /// Threads' generators for `workload` over `dataset` laid out as `keys`; `seed`: the
    /// run's.
    pub fn new(seed: u64, workload: &SysbenchWorkload, dataset: &TpccDataset, keys: TpccKeys) -> TpccSource {
        let gens = (0..workload.threads).map(|t| TpccGen::for_thread(seed, t, workload, dataset)).collect();
        let state = TpccState::new(dataset.tables.max(1), &keys);
        TpccSource { gens, keys, state }
    }

    /// Client `client`'s next transaction into `out`.
    #[inline]
    pub fn next(&mut self, client: usize, out: &mut Statement) {
        match self.gens.get_mut(client) {
            Some(g) => g.next(&self.keys, &mut self.state, out),
            None => out.clear(),
        }
    }
}

/// One client thread's generator.
#[derive(Debug, Clone)]
pub struct TpccGen {
    rand: SbRand,
    sets: u32,
    scale: u64,
    data_seed: u64,
    /// NURand's C for A = 255, 1023, 8191 (this thread's, simplification 4).
    c255: u64,
    c1023: u64,
    c8191: u64,
}

/// Where a transaction runs: set, warehouse, district (1-based w, d) and the district's
/// counter index.
#[derive(Debug, Clone, Copy)]
struct At {
    set: u32,
    w: u64,
    d: u64,
    slot: usize,
}

impl TpccGen {
    /// Thread `thread_id`'s generator (its own stream from (seed, thread)).
    pub fn for_thread(
        seed: u64,
        thread_id: u32,
        workload: &SysbenchWorkload,
        dataset: &TpccDataset,
    ) -> TpccGen {
        let stream = seed ^ (thread_id as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407) ^ 0x7cc;
        let mut rand = SbRand::new(stream, workload);
        let c255 = rand.uniform(0, 255);
        let c1023 = rand.uniform(0, 1023);
        let c8191 = rand.uniform(0, 8191);
        TpccGen {
            rand,
            sets: dataset.tables.max(1),
            scale: u64::from(dataset.scale.max(1)),
            data_seed: seed,
            c255,
            c1023,
            c8191,
        }
    }

    /// `NURand(A, x, y)` (tpcc_common.lua:639-666): `((U(0,A) | U(x,y)) + C) % (y-x+1) + x`.
    #[inline]
    pub fn nurand(&mut self, a: u64, x: u64, y: u64) -> u64 {
        let c = match a {
            255 => self.c255,
            1023 => self.c1023,
            _ => self.c8191,
        };
        ((self.rand.uniform(0, a) | self.rand.uniform(x, y)) + c) % (y - x + 1) + x
    }

    /// A hash of the data seed and `parts` (simplification 3).
    #[inline]
    fn hash(&self, parts: [u64; 3]) -> u64 {
        mix(self.data_seed ^ mix(parts[0] ^ mix(parts[1] ^ mix(parts[2].wrapping_add(0x51)))))
    }

    /// Lines of order `o` of district slot `slot`: U(5,15) by hash.
    #[inline]
    fn ol_cnt(&self, slot: usize, o: u64) -> u64 {
        5 + self.hash([slot as u64, o, 1]) % 11
    }

    /// o_c_id of order `o` (a load order's customer is a permutation; by hash).
    #[inline]
    fn order_customer(&self, slot: usize, o: u64) -> u64 {
        1 + self.hash([slot as u64, o, 2]) % 3000
    }

    /// ol_i_id of line `ol` of order `o`.
    #[inline]
    fn line_item(&self, slot: usize, o: u64, ol: u64) -> u64 {
        1 + self.hash([slot as u64, o, 3 + ol]) % 100_000
    }

    /// Whether customer `c` of district slot `slot` has c_credit 'BC' (10%).
    #[inline]
    fn bad_credit(&self, slot: usize, c: u64) -> bool {
        self.hash([slot as u64, c, 99]) % 10 == 0
    }

    /// Fills `out` with the next event.
    pub fn next(&mut self, keys: &TpccKeys, st: &mut TpccState, out: &mut Statement) {
        out.clear();
        let trx = self.rand.uniform(1, MAX_TRX);
        let set = (self.rand.uniform(1, u64::from(self.sets)) - 1) as u32;
        let w = self.rand.uniform(1, self.scale);
        let d = self.rand.uniform(1, DISTRICTS);
        let slot = set as usize * keys.districts() as usize + keys.district(w, d) as usize;
        let at = At { set, w, d, slot };
        // BEGIN and COMMIT (or ROLLBACK).
        out.queries = 2;
        match trx {
            1..=10 => self.new_order(keys, st, at, out),
            11..=20 => self.payment(keys, st, at, out),
            21 => self.order_status(keys, st, at, out),
            22 => self.delivery(keys, st, at, out),
            _ => self.stock_level(keys, st, at, out),
        }
    }

    fn read(out: &mut Statement, table: u32, index: Index, key: u64, span: u64, rows: u64) {
        out.push(Lookup { table, index, op: Op::Read, span: span.clamp(1, u64::from(u16::MAX)) as u16, key });
        out.rows += rows as u32;
    }

    fn write(out: &mut Statement, table: u32, index: Index, op: Op, key: u64) {
        out.push(Lookup::write(table, index, op, key));
        out.rows += u32::from(op != Op::Insert && index == Index::Clustered);
    }

    /// Reads the `cnt` lines of order `o`: clustered ranges of contiguous positions (one
    /// range for a loaded order; a run order's lines split where its growth leaf ends).
    fn lines(keys: &TpccKeys, out: &mut Statement, table: u32, at: At, o: u64, cnt: u64) {
        let mut start = keys.order_line(at.w, at.d, o, 1);
        let mut span = 1;
        for ol in 2..=cnt {
            let p = keys.order_line(at.w, at.d, o, ol);
            if p == start + span {
                span += 1;
            } else {
                Self::read(out, table, Index::Clustered, start, span, 0);
                start = p;
                span = 1;
            }
        }
        Self::read(out, table, Index::Clustered, start, span, 0);
        out.rows += cnt as u32;
    }

    fn new_order(&mut self, keys: &TpccKeys, st: &mut TpccState, at: At, out: &mut Statement) {
        let t = |k: TpccTable| k.in_set(at.set);
        let o = u64::from(st.next_o[at.slot]);
        let ol_cnt = self.ol_cnt(at.slot, o);
        let rbk = self.rand.uniform(1, 100);
        let c = self.nurand(1023, 1, 3000);
        out.kind = kind::NEW_ORDER;
        // customer ⋈ warehouse; district FOR UPDATE; UPDATE district.
        Self::read(out, t(TpccTable::Customer), Index::Clustered, keys.customer(at.w, at.d, c), 1, 1);
        Self::read(out, t(TpccTable::Warehouse), Index::Clustered, keys.warehouse(at.w), 1, 1);
        Self::read(out, t(TpccTable::District), Index::Clustered, keys.district_row(at.w, at.d), 1, 1);
        Self::write(
            out,
            t(TpccTable::District),
            Index::Clustered,
            Op::UpdateNonIndex,
            keys.district_row(at.w, at.d),
        );
        out.lock_last();
        // INSERT orders, INSERT new_orders.
        Self::write(out, t(TpccTable::Orders), Index::Clustered, Op::Insert, keys.orders(at.w, at.d, o));
        Self::write(
            out,
            t(TpccTable::Orders),
            Index::Secondary,
            Op::Insert,
            keys.orders_by_customer(at.w, at.d, c),
        );
        Self::write(
            out,
            t(TpccTable::NewOrders),
            Index::Clustered,
            Op::Insert,
            keys.new_orders(at.w, at.d, o),
        );
        out.queries += 5;
        for ol in 1..=ol_cnt {
            let item = self.nurand(8191, 1, 100_000);
            out.queries += 1;
            if rbk == 1 && ol == ol_cnt - 1 {
                // i_id = -1: no row; ROLLBACK (counted in BEGIN/COMMIT's 2).
                Self::read(out, t(TpccTable::Item), Index::Clustered, 1, 1, 0);
                out.kind = kind::NEW_ORDER_ROLLBACK;
                break;
            }
            Self::read(out, t(TpccTable::Item), Index::Clustered, keys.item(item), 1, 1);
            let s = keys.stock(at.w, item);
            Self::read(out, t(TpccTable::Stock), Index::Clustered, s, 1, 1);
            Self::write(out, t(TpccTable::Stock), Index::Clustered, Op::UpdateNonIndex, s);
            let line = keys.order_line(at.w, at.d, o, ol);
            Self::write(out, t(TpccTable::OrderLine), Index::Clustered, Op::Insert, line);
            Self::write(
                out,
                t(TpccTable::OrderLine),
                Index::Secondary,
                Op::Insert,
                keys.order_line_by_item(at.w, item),
            );
            out.queries += 3;
        }
        out.push(Lookup::write(t(TpccTable::District), Index::Clustered, Op::Commit, 0));
        if out.kind == kind::NEW_ORDER {
            st.next_o[at.slot] = st.next_o[at.slot].saturating_add(1);
        }
    }

    /// The customer by last name: the count and the ORDER BY c_first ranges of
    /// idx_customer (`fetch`: with a PK lookup per row, order_status's), the middle one's id.
    fn by_name(
        &mut self,
        keys: &TpccKeys,
        at: At,
        cw: u64,
        cd: u64,
        fetch: bool,
        out: &mut Statement,
    ) -> u64 {
        let table = TpccTable::Customer.in_set(at.set);
        let name = self.nurand(255, 0, 999);
        let (pos, cnt) = keys.customer_by_name(cw, cd, name);
        Self::read(out, table, Index::Secondary, pos, cnt, cnt);
        Self::read(out, table, Index::Secondary, pos, cnt, cnt);
        if fetch {
            for k in 0..cnt {
                let c = keys.customer_with_name(name, k);
                Self::read(out, table, Index::Clustered, keys.customer(cw, cd, c), 1, 0);
            }
        }
        out.queries += 2;
        // namecnt/2 rounded up (tpcc_run.lua:323-336), 1-based.
        keys.customer_with_name(name, cnt.div_ceil(2).saturating_sub(1))
    }

    fn payment(&mut self, keys: &TpccKeys, st: &mut TpccState, at: At, out: &mut Statement) {
        let t = |k: TpccTable| k.in_set(at.set);
        out.kind = kind::PAYMENT;
        let by_name = self.rand.uniform(1, 100) <= 60;
        let cd = if self.rand.uniform(1, 100) <= 85 { at.d } else { self.rand.uniform(1, DISTRICTS) };
        let cw = at.w; // other_ware() returns the home warehouse.
        let wk = keys.warehouse(at.w);
        let dk = keys.district_row(at.w, at.d);
        Self::write(out, t(TpccTable::Warehouse), Index::Clustered, Op::UpdateNonIndex, wk);
        out.lock_last();
        Self::read(out, t(TpccTable::Warehouse), Index::Clustered, wk, 1, 1);
        Self::write(out, t(TpccTable::District), Index::Clustered, Op::UpdateNonIndex, dk);
        out.lock_last();
        Self::read(out, t(TpccTable::District), Index::Clustered, dk, 1, 1);
        out.queries += 4;
        let c = if by_name { self.by_name(keys, at, cw, cd, false, out) } else { self.nurand(1023, 1, 3000) };
        let ck = keys.customer(cw, cd, c);
        Self::read(out, t(TpccTable::Customer), Index::Clustered, ck, 1, 1);
        out.queries += 1;
        let cslot = at.set as usize * keys.districts() as usize + keys.district(cw, cd) as usize;
        if self.bad_credit(cslot, c) {
            Self::read(out, t(TpccTable::Customer), Index::Clustered, ck, 1, 1);
            out.queries += 1;
        }
        Self::write(out, t(TpccTable::Customer), Index::Clustered, Op::UpdateNonIndex, ck);
        let n = st.history[at.set as usize];
        st.history[at.set as usize] = n + 1;
        Self::write(out, t(TpccTable::History), Index::Clustered, Op::Insert, keys.history_append(n));
        Self::write(
            out,
            t(TpccTable::History),
            Index::Secondary,
            Op::Insert,
            keys.history_by_customer(cw, cd, c),
        );
        Self::write(
            out,
            t(TpccTable::History),
            Index::Secondary2,
            Op::Insert,
            keys.history_by_district(at.w, at.d),
        );
        out.queries += 2;
        out.push(Lookup::write(t(TpccTable::History), Index::Clustered, Op::Commit, 0));
    }

    fn order_status(&mut self, keys: &TpccKeys, st: &mut TpccState, at: At, out: &mut Statement) {
        let t = |k: TpccTable| k.in_set(at.set);
        out.kind = kind::ORDER_STATUS;
        let by_name = self.rand.uniform(1, 100) <= 60;
        let c = if by_name {
            self.by_name(keys, at, at.w, at.d, true, out)
        } else {
            let c = self.nurand(1023, 1, 3000);
            Self::read(out, t(TpccTable::Customer), Index::Clustered, keys.customer(at.w, at.d, c), 1, 1);
            out.queries += 1;
            c
        };
        // The customer's orders through idx_orders (one at load, one more per 3000 run
        // orders of the district), a PK lookup each.
        let next = u64::from(st.next_o[at.slot]);
        let orders = 1 + (next - 1).saturating_sub(ORDERS) / 3000;
        Self::read(
            out,
            t(TpccTable::Orders),
            Index::Secondary,
            keys.orders_by_customer(at.w, at.d, c),
            orders,
            orders,
        );
        let first = 1 + self.hash([at.slot as u64, c, 7]) % ORDERS;
        for k in 0..orders {
            let o = if k == 0 { first } else { ORDERS + k * 3000 };
            Self::read(out, t(TpccTable::Orders), Index::Clustered, keys.orders(at.w, at.d, o), 1, 0);
        }
        // The lines of order number d_id (tpcc_run.lua:551-553, as coded).
        let cnt = self.ol_cnt(at.slot, at.d);
        Self::lines(keys, out, t(TpccTable::OrderLine), at, at.d, cnt);
        out.queries += 2;
    }

    fn delivery(&mut self, keys: &TpccKeys, st: &mut TpccState, at: At, out: &mut Statement) {
        let t = |k: TpccTable| k.in_set(at.set);
        out.kind = kind::DELIVERY;
        for d in 1..=DISTRICTS {
            let slot = at.set as usize * keys.districts() as usize + keys.district(at.w, d) as usize;
            let here = At { d, slot, ..at };
            let o = u64::from(st.oldest[slot]);
            out.queries += 1;
            if o >= u64::from(st.next_o[slot]) {
                // No undelivered order: the SELECT finds none.
                Self::read(out, t(TpccTable::NewOrders), Index::Clustered, keys.new_orders(at.w, d, o), 1, 0);
                continue;
            }
            st.oldest[slot] += 1;
            let no = keys.new_orders(at.w, d, o);
            Self::read(out, t(TpccTable::NewOrders), Index::Clustered, no, 1, 1);
            Self::write(out, t(TpccTable::NewOrders), Index::Clustered, Op::Delete, no);
            let ok = keys.orders(at.w, d, o);
            Self::read(out, t(TpccTable::Orders), Index::Clustered, ok, 1, 1);
            Self::write(out, t(TpccTable::Orders), Index::Clustered, Op::UpdateNonIndex, ok);
            let cnt = self.ol_cnt(slot, o);
            for ol in 1..=cnt {
                let p = keys.order_line(at.w, d, o, ol);
                Self::write(out, t(TpccTable::OrderLine), Index::Clustered, Op::UpdateNonIndex, p);
            }
            Self::lines(keys, out, t(TpccTable::OrderLine), here, o, cnt);
            let c = self.order_customer(slot, o);
            Self::write(
                out,
                t(TpccTable::Customer),
                Index::Clustered,
                Op::UpdateNonIndex,
                keys.customer(at.w, d, c),
            );
            out.queries += 6;
        }
        out.push(Lookup::write(t(TpccTable::Customer), Index::Clustered, Op::Commit, 0));
    }

    fn stock_level(&mut self, keys: &TpccKeys, st: &mut TpccState, at: At, out: &mut Statement) {
        let t = |k: TpccTable| k.in_set(at.set);
        out.kind = kind::STOCK_LEVEL;
        let _level = self.rand.uniform(10, 20);
        Self::read(out, t(TpccTable::District), Index::Clustered, keys.district_row(at.w, at.d), 1, 1);
        let next = u64::from(st.next_o[at.slot]);
        // order_line of the 20 newest orders, a stock PK point per line.
        for o in next.saturating_sub(20).max(1)..next {
            let cnt = self.ol_cnt(at.slot, o);
            Self::lines(keys, out, t(TpccTable::OrderLine), at, o, cnt);
            for ol in 1..=cnt {
                let i = self.line_item(at.slot, o, ol);
                Self::read(out, t(TpccTable::Stock), Index::Clustered, keys.stock(at.w, i), 1, 1);
            }
        }
        out.queries += 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CharacterSet, RandType};
    use crate::workload::rand::test_workload;
    use proptest::prelude::*;

    fn setup(scale: u32, tables: u32) -> (TpccSource, TpccDataset) {
        let ds = TpccDataset { scale, tables, compress_ratio: 1.0, order_capacity: 6000 };
        let keys = TpccKeys::new(scale, 6000, 16384, CharacterSet::Latin1, 5);
        let w = test_workload(RandType::Uniform);
        (TpccSource::new(9, &w, &ds, keys), ds)
    }

    /// The mix as coded: 10/23 new_order (with its 1% rollbacks), 10/23 payment, 1/23
    /// each of the others, within 5 binomial standard deviations over 100,000 events.
    #[test]
    fn the_mix_is_uniform_1_to_23() {
        let (mut src, _) = setup(2, 1);
        let mut s = Statement::default();
        let mut counts = [0u64; 7];
        let n = 100_000u64;
        for i in 0..n {
            src.next((i % 4) as usize, &mut s);
            counts[s.kind as usize] += 1;
        }
        let band = |c: u64, p: f64| {
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            (c as f64 - n as f64 * p).abs() < 5.0 * sd
        };
        let no = counts[1] + counts[6];
        assert!(band(no, 10.0 / 23.0), "{counts:?}");
        assert!(band(counts[2], 10.0 / 23.0), "{counts:?}");
        for k in 3..=5 {
            assert!(band(counts[k], 1.0 / 23.0), "{counts:?}");
        }
        // 1% of new orders roll back.
        let p = 0.01;
        let sd = (no as f64 * p * (1.0 - p)).sqrt();
        assert!((counts[6] as f64 - no as f64 * p).abs() < 5.0 * sd, "{counts:?}");
    }

    /// NURand stays in its range, and is skewed (C fixed per thread): the most frequent
    /// customer id is drawn several times the uniform rate.
    #[test]
    fn nurand_ranges() {
        let (ds, w) = (setup(1, 1).1, test_workload(RandType::Uniform));
        let mut g = TpccGen::for_thread(3, 0, &w, &ds);
        let mut hist = vec![0u32; 3001];
        for _ in 0..300_000 {
            let c = g.nurand(1023, 1, 3000);
            assert!((1..=3000).contains(&c));
            hist[c as usize] += 1;
            assert!((1..=100_000).contains(&g.nurand(8191, 1, 100_000)));
            assert!(g.nurand(255, 0, 999) <= 999);
        }
        let max = *hist.iter().max().unwrap();
        assert!(max > 3 * 100, "max {max} of a uniform 100");
    }

    /// A payment's statements mark the rows they lock: its UPDATE warehouse (the first
    /// statement) and UPDATE district (the third); a new_order marks its district UPDATE
    /// (the fourth); the other transactions lock no row.
    #[test]
    fn a_payment_locks_its_warehouse_then_its_district_row() {
        let (mut src, _) = setup(1, 1);
        let mut s = Statement::default();
        let mut seen = 0;
        for _ in 0..500 {
            src.next(0, &mut s);
            let locks = &s.lock_at[..s.n_locks as usize];
            match s.kind {
                kind::PAYMENT => {
                    seen += 1;
                    let l = s.lookups();
                    let tk = |i: usize| TpccTable::of(l[i].table).1;
                    assert_eq!(locks, [0, 2]);
                    assert_eq!((tk(0), l[0].op), (TpccTable::Warehouse, Op::UpdateNonIndex));
                    assert_eq!((tk(2), l[2].op), (TpccTable::District, Op::UpdateNonIndex));
                }
                kind::NEW_ORDER | kind::NEW_ORDER_ROLLBACK => assert_eq!(locks, [3]),
                _ => assert!(locks.is_empty(), "kind {}", s.kind),
            }
        }
        assert!(seen > 100);
    }

    /// A new_order is the script's statements in order: customer and warehouse points, the
    /// district's FOR UPDATE and UPDATE, the orders and new_orders inserts (idx_orders
    /// too), then per line item, stock, its UPDATE and the order_line insert (with
    /// fkey_order_line_2), then COMMIT; 5 + 4 per line + BEGIN/COMMIT queries.
    #[test]
    fn a_new_order_is_the_scripts_sequence() {
        let (mut src, _) = setup(1, 1);
        let mut s = Statement::default();
        let mut seen = 0;
        for _ in 0..2000 {
            src.next(0, &mut s);
            if s.kind != kind::NEW_ORDER {
                continue;
            }
            seen += 1;
            let l = s.lookups();
            let tk = |i: usize| TpccTable::of(l[i].table).1;
            use TpccTable::*;
            assert_eq!((tk(0), tk(1), tk(2)), (Customer, Warehouse, District));
            assert_eq!((tk(3), l[3].op), (District, Op::UpdateNonIndex));
            assert_eq!(s.lock_at[..s.n_locks as usize], [3], "the district row is locked");
            assert_eq!((tk(4), l[4].op, l[4].index), (Orders, Op::Insert, Index::Clustered));
            assert_eq!((tk(5), l[5].op, l[5].index), (Orders, Op::Insert, Index::Secondary));
            assert_eq!((tk(6), l[6].op), (NewOrders, Op::Insert));
            let lines = (s.n - 8) / 5;
            assert!((5..=15).contains(&lines), "{lines}");
            for k in 0..lines {
                let b = 7 + 5 * k;
                assert_eq!(
                    (tk(b), tk(b + 1), tk(b + 2), tk(b + 3), tk(b + 4)),
                    (Item, Stock, Stock, OrderLine, OrderLine)
                );
                assert_eq!(l[b + 2].op, Op::UpdateNonIndex);
                assert_eq!((l[b + 3].op, l[b + 4].index), (Op::Insert, Index::Secondary));
                assert_eq!(l[b + 1].key, l[b + 2].key, "the stock row read is the one updated");
            }
            assert_eq!(l[s.n - 1].op, Op::Commit);
            assert_eq!(s.queries as usize, 2 + 5 + 4 * lines);
        }
        assert!(seen > 700);
    }

    /// The run's orders land at the end of their district: the first new_order of a
    /// district inserts its order at that district's first growth position, the next one
    /// right after; a delivery then deletes the oldest new order (2101) first.
    #[test]
    fn inserts_append_and_delivery_takes_the_oldest() {
        let (mut src, _) = setup(1, 1);
        let mut s = Statement::default();
        let mut last: std::collections::HashMap<u64, u64> = Default::default();
        let mut deleted_first = std::collections::HashMap::new();
        for _ in 0..20_000 {
            src.next(1, &mut s);
            let l = s.lookups();
            if s.kind == kind::NEW_ORDER {
                let d = (l[2].key - 1) % 10 + 1;
                let o = src.keys.orders(1, d, 3001);
                let pos = l[4].key;
                match last.insert(d, pos) {
                    None => assert_eq!(pos, o, "district {d}'s first run order"),
                    Some(prev) => assert!(pos > prev, "appends ascend within the district"),
                }
                assert!(pos > src.keys.orders(1, 10, 3000), "past the loaded orders");
            }
            if s.kind == kind::DELIVERY {
                for x in l.iter().filter(|x| x.op == Op::Delete) {
                    let j = (x.key - 1) / 900;
                    deleted_first.entry(j).or_insert(x.key);
                }
            }
        }
        for (j, first) in deleted_first {
            assert_eq!(first, j * 900 + 1, "district {j} delivers o_id 2101 first");
        }
    }

    proptest! {
        /// Every key is within its table's laid-out positions (and its secondary index's
        /// entries), every table within the dataset.
        #[test]
        fn keys_within_their_tables(seed in any::<u64>(), scale in 1u32..4, tables in 1u32..3, events in 1usize..400) {
            let ds = TpccDataset { scale, tables, compress_ratio: 1.0, order_capacity: 3100 };
            let keys = TpccKeys::new(scale, 3100, 16384, CharacterSet::Latin1, seed % 256);
            let layouts = keys.layouts(16384, CharacterSet::Latin1);
            let w = test_workload(RandType::Uniform);
            let mut src = TpccSource::new(seed, &w, &ds, keys);
            let mut s = Statement::default();
            for i in 0..events {
                src.next(i % 4, &mut s);
                prop_assert!(s.n >= 2);
                for l in s.lookups() {
                    prop_assert!(l.table < 9 * tables);
                    if l.op == Op::Commit { continue; }
                    let lay = &layouts[(l.table % 9) as usize];
                    let rows = match l.index {
                        Index::Clustered => lay.rows,
                        Index::Secondary => lay.secondaries[0].leaf_pages() * lay.secondaries[0].recs_per_leaf,
                        Index::Secondary2 => lay.secondaries[1].leaf_pages() * lay.secondaries[1].recs_per_leaf,
                    };
                    prop_assert!(l.key >= 1 && l.key + u64::from(l.span.max(1)) - 1 <= rows,
                        "{:?} {:?} key {} span {} rows {}", TpccTable::of(l.table), l.index, l.key, l.span, rows);
                }
            }
        }
    }
}
