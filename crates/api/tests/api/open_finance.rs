//! Open-finance rows, made the way the `cofre import-ofx` command makes
//! them (`cofre_api::import`): what the API then shows, deduplication by the
//! bank's id, and the imports that must store nothing.

use serde_json::{Value, json};

use cofre_api::import::{ImportError, import_ofx, import_ofx_for};
use cofre_domain::AccountId;
use cofre_domain::ofx::{OfxError, RowProblem};
use cofre_store::{ImportSummary, WriteContext};

use crate::on_both_backends;
use crate::support::{Backend, NOW, TestApp};

const BANK_SGML: &[u8] = include_bytes!("../fixtures/ofx/bank-checking-sgml.ofx");
const CARD_XML: &[u8] = include_bytes!("../fixtures/ofx/card-statement-xml.ofx");
const NOVEMBER: &str = "from=2026-11-01&to=2026-11-30";

fn ctx() -> WriteContext {
    WriteContext {
        now: NOW.parse().expect("NOW"),
        today: jiff::civil::date(2026, 11, 22),
    }
}

fn account_id(id: &str) -> AccountId {
    AccountId::parse(id).expect("account id")
}

fn summary(added: usize, already_present: usize) -> ImportSummary {
    ImportSummary {
        added,
        already_present,
    }
}

/// The account's visible rows in November, newest first (the ledger view:
/// card rows too).
async fn rows(app: &TestApp, account: &str) -> Vec<Value> {
    app.all_pages(&format!("{NOVEMBER}&view=ledger&account_id={account}"), 100)
        .await
}

fn by_description<'a>(rows: &'a [Value], description: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["description"] == description)
        .unwrap_or_else(|| panic!("no row {description:?} in {rows:?}"))
}

/// A number of a JSON body exactly as sent (read back as f64 it would
/// hide a rounding).
fn raw_number(text: &str, key: &str) -> String {
    let label = format!("\"{key}\":");
    let start = text
        .find(&label)
        .unwrap_or_else(|| panic!("{key} in {text}"))
        + label.len();
    let end = start + text[start..].find([',', '}']).expect("end of number");
    text[start..end].to_owned()
}

async fn raw_amount(app: &TestApp, id: &Value) -> String {
    let path = format!("/v1/transactions/{}", id.as_str().expect("id"));
    raw_number(&app.get(&path).await.text, "amount")
}

async fn balance_text(app: &TestApp, account: &str) -> String {
    let path = format!("/v1/accounts/{account}");
    raw_number(&app.get(&path).await.text, "balance")
}

async fn imports_a_bank_statement(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app
        .account(json!({"type": "BANK", "title": "Itaú", "initial_balance": 1000}))
        .await;
    let done = import_ofx(app.store.as_ref(), account_id(&account), BANK_SGML, ctx())
        .await
        .expect("import");
    assert_eq!(done, summary(9, 0));

    let rows = rows(&app, &account).await;
    assert_eq!(rows.len(), 9, "{rows:?}");
    for row in &rows {
        assert_eq!(row["open_finance"], true, "{row}");
        assert_eq!(row["source"], "OPEN_FINANCE");
        assert_eq!(row["created_by_user"], false);
        assert_eq!(row["currency"], "BRL");
        assert_eq!(row["account_id"], account.as_str());
        assert_eq!(row["projected"], false);
        assert_eq!(row["hide_from_results"], false);
    }
    let pix = by_description(&rows, "PIX ENVIADO");
    assert_eq!(pix["type"], "DEBIT");
    assert_eq!(pix["status"], "POSTED");
    assert_eq!(pix["date"], "2026-11-03");
    assert_eq!(
        pix["original_description"],
        "PIX ENVIADO - João Imóveis Aluguel"
    );
    assert_eq!(raw_amount(&app, &pix["id"]).await, "1850.00");

    let salary = by_description(&rows, "PAGTO SALARIO");
    assert_eq!(salary["type"], "CREDIT");
    assert_eq!(salary["date"], "2026-11-01");
    assert_eq!(raw_amount(&app, &salary["id"]).await, "5250.00");

    // MEMO alone, padded with blanks in the file; Windows-1252 text.
    let market = by_description(&rows, "SUPERMERCADO PÃO DE AÇÚCAR");
    assert_eq!(market["original_description"], "SUPERMERCADO PÃO DE AÇÚCAR");
    assert_eq!(raw_amount(&app, &market["id"]).await, "237.46");
    // `&amp;` decoded; NAME equal to MEMO is said once.
    let store = by_description(&rows, "C&A MODAS");
    assert_eq!(store["original_description"], "C&A MODAS");
    // 23:59:59 at UTC-3 is the 21st in UTC, but the bank's day is the 20th.
    let fee = by_description(&rows, "TARIFA PACOTE SERVIÇOS");
    assert_eq!(fee["date"], "2026-11-20");
    assert_eq!(raw_amount(&app, &fee["id"]).await, "12.34");
    // Dated after today: scheduled, so PENDING and outside the balance.
    let scheduled = by_description(&rows, "PAGTO BOLETO AGENDADO");
    assert_eq!(scheduled["status"], "PENDING");
    assert_eq!(scheduled["date"], "2026-11-25");

    let account_body = app.get(&format!("/v1/accounts/{account}")).await;
    assert_eq!(
        account_body.ok(200)["open_finance"],
        json!({"connected": true, "connector_name": "OFX"})
    );
    // 1000.00 opening + 5370.00 in - 2395.19 posted out.
    assert_eq!(balance_text(&app, &account).await, "3974.81");

    // The original description is searchable.
    let found = app
        .all_pages(&format!("{NOVEMBER}&search=im%C3%B3veis"), 100)
        .await;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["id"], pix["id"]);
}

async fn reimporting_adds_nothing(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Itaú").await;
    let id = account_id(&account);
    let first = import_ofx(app.store.as_ref(), id, BANK_SGML, ctx()).await;
    assert_eq!(first.expect("first import"), summary(9, 0));
    let before = rows(&app, &account).await;
    let balance = balance_text(&app, &account).await;

    let again = import_ofx(app.store.as_ref(), id, BANK_SGML, ctx()).await;
    assert_eq!(again.expect("second import"), summary(0, 9));
    assert_eq!(rows(&app, &account).await, before);
    assert_eq!(balance_text(&app, &account).await, balance);

    // A later statement overlapping this one: only the new id is added.
    let text = String::from_utf8_lossy(BANK_SGML).replace("202611250001", "202611260001");
    let later = import_ofx(app.store.as_ref(), id, text.as_bytes(), ctx()).await;
    assert_eq!(later.expect("overlapping import"), summary(1, 8));
    assert_eq!(rows(&app, &account).await.len(), 10);

    // The same file into another account is another set of rows.
    let other = app.bank("Poupança").await;
    let into_other = import_ofx(app.store.as_ref(), account_id(&other), BANK_SGML, ctx()).await;
    assert_eq!(into_other.expect("other account"), summary(9, 0));
}

async fn imports_a_card_statement(backend: Backend) {
    let app = TestApp::start(backend).await;
    let card = app
        .account(json!({"type": "CREDIT", "title": "Cartão", "credit_limit": 5000}))
        .await;
    let done = import_ofx(app.store.as_ref(), account_id(&card), CARD_XML, ctx()).await;
    assert_eq!(done.expect("import"), summary(8, 0));

    let rows = rows(&app, &card).await;
    assert_eq!(rows.len(), 8);
    let pharmacy = by_description(&rows, "Drogaria São Paulo & Cia");
    assert_eq!(pharmacy["type"], "DEBIT");
    assert_eq!(pharmacy["date"], "2026-11-13");
    assert_eq!(raw_amount(&app, &pharmacy["id"]).await, "64.32");
    let payment = by_description(&rows, "Pagamento recebido");
    assert_eq!(payment["type"], "CREDIT");
    assert_eq!(raw_amount(&app, &payment["id"]).await, "1234.56");
    // 19:30 at UTC-3 on the 2nd is the 2nd as written.
    assert_eq!(
        by_description(&rows, "iFood *Restaurante Sabor da Terra")["date"],
        "2026-11-02"
    );

    let body = app.get(&format!("/v1/accounts/{card}")).await;
    assert_eq!(
        body.ok(200)["open_finance"],
        json!({"connected": true, "connector_name": "OFX"})
    );
    // Credits 1290.46 minus debits 555.27.
    assert_eq!(balance_text(&app, &card).await, "735.19");
}

async fn another_users_account_is_not_found(backend: Backend) {
    let app = TestApp::start(backend).await;
    let account = app.bank("Itaú").await;
    let (stranger, _) = app.new_user().await;
    let err = import_ofx_for(
        app.store.as_ref(),
        stranger,
        account_id(&account),
        BANK_SGML,
        ctx(),
    )
    .await
    .expect_err("another user's account");
    assert!(
        matches!(err, ImportError::NoSuchAccount(id) if id == account_id(&account)),
        "{err:?}"
    );
    let missing = AccountId::new();
    let err = import_ofx(app.store.as_ref(), missing, BANK_SGML, ctx())
        .await
        .expect_err("no such account");
    assert_eq!(err.to_string(), format!("no account with id {missing}"));

    assert!(rows(&app, &account).await.is_empty());
    let body = app.get(&format!("/v1/accounts/{account}")).await;
    assert_eq!(body.ok(200)["open_finance"]["connected"], false);
    // The owner's own import works.
    let own = import_ofx_for(
        app.store.as_ref(),
        app.user,
        account_id(&account),
        BANK_SGML,
        ctx(),
    );
    assert_eq!(own.await.expect("owner"), summary(9, 0));
}

/// Imports that must be refused, leaving the account untouched.
async fn refused_imports_store_nothing(backend: Backend) {
    let app = TestApp::start(backend).await;
    let dollars = app
        .account(json!({"type": "BANK", "title": "Conta USD", "currency_code": "USD"}))
        .await;
    let err = import_ofx(app.store.as_ref(), account_id(&dollars), BANK_SGML, ctx())
        .await
        .expect_err("currency mismatch");
    assert_eq!(
        err.to_string(),
        format!(
            "cannot import into account {dollars}: the statement is in BRL but the account is in USD"
        )
    );

    let bank = app.bank("Itaú").await;
    let err = import_ofx(app.store.as_ref(), account_id(&bank), CARD_XML, ctx())
        .await
        .expect_err("card statement into a bank account");
    assert!(
        err.to_string()
            .ends_with("a credit-card statement cannot go into a BANK account"),
        "{err}"
    );

    let archived = app.archived_bank("Antiga").await;
    let err = import_ofx(app.store.as_ref(), account_id(&archived), BANK_SGML, ctx())
        .await
        .expect_err("archived account");
    assert!(matches!(err, ImportError::Refused { .. }), "{err:?}");

    // One bad amount refuses the whole file.
    let text = String::from_utf8_lossy(BANK_SGML).replace("<TRNAMT>-45.50", "<TRNAMT>-45.505");
    let err = import_ofx(
        app.store.as_ref(),
        account_id(&bank),
        text.as_bytes(),
        ctx(),
    )
    .await
    .expect_err("bad amount");
    assert!(
        matches!(
            &err,
            ImportError::Ofx(OfxError::Transaction { index: 7, fitid: Some(f), problem: RowProblem::TooPrecise(_), .. })
                if f == "202611150001"
        ),
        "{err:?}"
    );

    for account in [&dollars, &bank, &archived] {
        let hidden_too = app
            .all_pages(&format!("{NOVEMBER}&account_id={account}&hidden=true"), 100)
            .await;
        assert!(hidden_too.is_empty());
        assert!(rows(&app, account).await.is_empty());
        let body = app.get(&format!("/v1/accounts/{account}")).await;
        assert_eq!(
            body.ok(200)["open_finance"],
            json!({"connected": false, "connector_name": null})
        );
    }
}

on_both_backends!(
    imports_a_bank_statement,
    reimporting_adds_nothing,
    imports_a_card_statement,
    another_users_account_is_not_found,
    refused_imports_store_nothing,
);
