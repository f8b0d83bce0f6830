//! Transaction rows read back alike whichever way the store reads them:
//! column by column on the calling thread (a database file) or as one
//! JSON page through the pool (a database in memory), with their tags,
//! in the list's order.

use jiff::civil::date;

use cofre_domain::Money;
use cofre_domain::tag::new_tag;
use cofre_domain::transaction::{
    NewTransactionInput, PageRequest, Transaction, TransactionFilter, TxType, new_transaction,
};

mod support;
use support::{bank_account, now};

/// Three rows of one user: one with two tags, one with none, one with a
/// note; read back by id and as a list.
async fn rows_read_back(url: &str) {
    let store = cofre_store::connect(url).await.unwrap();
    let (now, today) = now();
    let user = store.create_user(None, now).await.unwrap().id;
    let account = bank_account(store.as_ref(), user).await;
    let food = store
        .create_tag(user, &new_tag("Food", "#112233").unwrap(), now)
        .await
        .unwrap();
    let trip = store
        .create_tag(user, &new_tag("Trip \"2026\"", "#445566").unwrap(), now)
        .await
        .unwrap();
    let mut made = Vec::new();
    for (day, tags, notes) in [
        (20, vec![trip.id, food.id], None),
        (21, vec![], None),
        (
            20,
            vec![],
            Some("a \"quoted\" note\nover two lines".to_owned()),
        ),
    ] {
        let input = NewTransactionInput {
            account_id: Some(account),
            tx_type: Some(TxType::Debit),
            amount: Some(Money::from_cents(1234 + day)),
            description: Some(format!("Row of the {day}th")),
            date: Some(date(2026, 11, day as i8)),
            notes,
            tag_ids: tags,
            ..Default::default()
        };
        let new = new_transaction(&input, today).unwrap();
        made.push(
            store
                .create_transaction(user, &new, None, now, None)
                .await
                .unwrap()
                .value,
        );
    }

    for row in &made {
        let id = row.id.stored().unwrap();
        let read = store.get_transaction(user, id).await.unwrap();
        assert_eq!(&read, row, "{url}: row by id");
    }
    let tagged = store
        .get_transaction(user, made[0].id.stored().unwrap())
        .await
        .unwrap();
    let titles: Vec<&str> = tagged.tags.iter().map(|t| t.title.as_str()).collect();
    assert_eq!(titles, ["Food", "Trip \"2026\""], "{url}: tags by title");

    let filter = TransactionFilter::window(date(2026, 11, 1), date(2026, 11, 30));
    let page = store
        .list_transactions(
            user,
            &filter,
            &PageRequest {
                limit: 2,
                after: None,
            },
        )
        .await
        .unwrap();
    assert!(page.has_more, "{url}");
    // Newest day first, ids ascending within a day.
    let mut expected: Vec<&Transaction> = made.iter().collect();
    expected.sort_by_key(|t| (std::cmp::Reverse(t.state.date), t.id.to_string()));
    let got: Vec<&Transaction> = page.items.iter().collect();
    assert_eq!(got, expected[..2], "{url}: the first page");
}

#[tokio::test]
async fn rows_read_from_a_file_on_the_calling_thread() {
    let dir = tempfile::tempdir().unwrap();
    rows_read_back(&format!(
        "sqlite://{}",
        dir.path().join("rows.db").display()
    ))
    .await;
}

#[tokio::test]
async fn rows_read_from_memory_as_one_json_page() {
    rows_read_back("sqlite::memory:").await;
}

/// A row whose stored text is not what cofre writes (an id, a day, a type
/// or a source that does not parse, whether or not its bytes are ASCII;
/// kept text that is not UTF-8) reads as corrupt, naming what did not
/// parse: never a panic, never an entry made of the wrong value. Ids,
/// days and names are parsed from their bytes without a UTF-8 check of
/// their own, so the parsers are what refuse them.
#[tokio::test]
async fn a_row_that_does_not_parse_reads_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corrupt.db");
    let store = cofre_store::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let (now, today) = now();
    let user = store.create_user(None, now).await.unwrap().id;
    let account = bank_account(store.as_ref(), user).await;
    let input = NewTransactionInput {
        account_id: Some(account),
        tx_type: Some(TxType::Debit),
        amount: Some(Money::from_cents(1234)),
        description: Some("Bakery".into()),
        date: Some(today),
        ..Default::default()
    };
    let new = new_transaction(&input, today).unwrap();
    let row = store
        .create_transaction(user, &new, None, now, None)
        .await
        .unwrap()
        .value;
    let id = row.id.stored().unwrap();
    // Another connection, as another process (or a hand editing the
    // file) would write, past the schema's checks.
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF")
        .unwrap();
    let restore = "UPDATE transactions SET type = 'DEBIT', source = 'API', \
        date = '2026-11-22', category_id = NULL, description = 'Bakery'";
    for (damage, named) in [
        ("type = 'BOGUS'", "type"),
        ("type = 'DÉBIT'", "type"),
        ("source = 'APÍ'", "source"),
        ("date = '2026-11-2é'", "date"),
        ("date = '2026-13-01'", "date"),
        (
            "category_id = '0000000-0000-4000-8000-00000000000é'",
            "category_id",
        ),
        ("description = CAST(X'C328' AS TEXT)", "column 7"),
    ] {
        other.execute_batch(restore).unwrap();
        assert_eq!(store.get_transaction(user, id).await.unwrap(), row);
        other
            .execute_batch(&format!("UPDATE transactions SET {damage}"))
            .unwrap();
        match store.get_transaction(user, id).await {
            Err(cofre_store::StoreError::Corrupt(message)) => {
                assert!(message.contains(named), "{damage}: {message}");
            }
            other => panic!("{damage}: read as {other:?}"),
        }
    }
}
