"""A scripted session of a client generated from docs/openapi.json by
openapi-python-client, against a fresh cofre server: every operation, and
the error statuses, through the generated typed functions only, asserting
the typed values they return.

Run by scripts/conformance, which generates the client, starts the server
and sets COFRE_URL, COFRE_KEY (read and write), COFRE_READ_KEY (read only)
and COFRE_OTHER_KEY (a second user's key). The server has a bulk limit of
BULK_LIMIT calls per hour, so the 429 of that limit can be shown.
"""

import datetime
import io
import os
import sys
import uuid

from cofre_client import AuthenticatedClient, Client
from cofre_client.api.accounts import (
    create_account,
    delete_account,
    get_account,
    list_accounts,
    update_account,
)
from cofre_client.api.budgets import (
    budget_status,
    create_budget,
    delete_budget,
    get_budget,
    list_budgets,
    update_budget,
)
from cofre_client.api.cards import list_bills, used_limit
from cofre_client.api.categories import (
    create_category,
    delete_category,
    list_categories,
    update_category,
)
from cofre_client.api.export import export_user_data
from cofre_client.api.operations import get_receipt, healthz, index, metrics, readyz
from cofre_client.api.overview import get_overview
from cofre_client.api.profile import get_me, patch_me
from cofre_client.api.reports import cashflow_report, net_worth_report, spending_report
from cofre_client.api.tags import create_tag, delete_tag, list_tags, update_tag
from cofre_client.api.transactions import (
    bulk,
    create_transaction,
    delete_receipt,
    delete_transaction,
    find_duplicates,
    get_transaction,
    list_transactions,
    put_receipt,
    update_transaction,
)
from cofre_client.api.transfers import create_transfer, mark_transfer, unmark_transfer
from cofre_client.models import (
    AccountType,
    BulkBody,
    BulkSet,
    CreateAccount,
    CreateBudget,
    CreateCategory,
    CreatedRule,
    CreatedTransaction,
    CreateTag,
    CreateTransaction,
    CreateTransfer,
    DeleteTransactionScope,
    Frequency,
    InstallmentsBody,
    ListTransactionsView,
    MarkTransfer,
    PatchMe,
    PayBill,
    Problem,
    PutReceiptBody,
    RecurrenceBody,
    SpendingReportView,
    Scope,
    SubType,
    TxStatus,
    TxType,
    UpdateAccount,
    UpdateBudget,
    UpdateCategory,
    UpdateTag,
    UpdateTransaction,
)
from cofre_client.types import UNSET, File

BULK_LIMIT = int(os.environ.get("COFRE_BULK_LIMIT", "3"))

# A 1x1 PNG: the server decides a receipt's type from its bytes.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

steps = 0


def step(name):
    global steps
    steps += 1
    print(f"client: {steps:2d}. {name}", flush=True)


def problem(response, status, code=None):
    """Asserts a typed problem document of `status` (and `code`)."""
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert isinstance(response.parsed, Problem), type(response.parsed)
    assert response.parsed.status == status
    if code is not None:
        assert response.parsed.code == code, response.parsed.code
    return response.parsed


def ok(response, status=200):
    assert response.status_code == status, (response.status_code, response.content[:300])
    return response.parsed


def utc_today():
    return datetime.datetime.now(datetime.timezone.utc).date()


def main():
    url = os.environ["COFRE_URL"]
    api = AuthenticatedClient(base_url=url, token=os.environ["COFRE_KEY"], raise_on_unexpected_status=True)
    reader = AuthenticatedClient(base_url=url, token=os.environ["COFRE_READ_KEY"])
    other = AuthenticatedClient(base_url=url, token=os.environ["COFRE_OTHER_KEY"])
    stranger = AuthenticatedClient(base_url=url, token="cofre_" + "0" * 32 + "_" + "0" * 64)
    public = Client(base_url=url)
    # The server runs with COFRE_TIMEZONE=UTC (scripts/conformance): its
    # today, whatever the machine's zone.
    today = utc_today()

    step("public routes: index, health, readiness, metrics")
    found = ok(index.sync_detailed(client=public))
    assert found.name == "cofre" and found.openapi == "/v1/openapi.json"
    assert ok(healthz.sync_detailed(client=public)).status == "ok"
    assert ok(readyz.sync_detailed(client=public)).status == "ok"
    page = metrics.sync_detailed(client=public)
    assert page.status_code == 200 and b"http_requests_total" in page.content

    step("profile: read and change")
    me = ok(get_me.sync_detailed(client=api))
    assert "write" in me.scopes and me.limits.rate.minute.limit >= 0
    changed = ok(patch_me.sync_detailed(client=api, body=PatchMe(name="Ana", wage=5000.0)))
    assert changed.name == "Ana" and changed.wage == 5000.0

    step("accounts: a bank account, a savings account and a credit card")
    bank = ok(
        create_account.sync_detailed(
            client=api,
            body=CreateAccount(type_=AccountType.BANK, title="Conta", initial_balance=1000.0),
        ),
        201,
    )
    assert bank.type_ == AccountType.BANK and bank.balance == 1000.0
    assert isinstance(bank.initial_balance_transaction_id, str)
    savings = ok(
        create_account.sync_detailed(
            client=api,
            body=CreateAccount(type_=AccountType.BANK, sub_type=SubType.SAVINGS_ACCOUNT, title="Poupança"),
        ),
        201,
    )
    card = ok(
        create_account.sync_detailed(
            client=api,
            body=CreateAccount(
                type_=AccountType.CREDIT,
                title="Cartão",
                credit_limit=3000.0,
                credit_close_day=5,
                credit_due_day=12,
                pay_bill_from_account_id=uuid.UUID(bank.id),
            ),
        ),
        201,
    )
    assert card.sub_type == SubType.CREDIT_CARD and card.credit.limit == 3000.0
    listed = ok(list_accounts.sync_detailed(client=api))
    assert {a.id for a in listed.data} >= {bank.id, savings.id, card.id}
    assert ok(get_account.sync_detailed(uuid.UUID(card.id), client=api)).title == "Cartão"
    renamed = ok(update_account.sync_detailed(uuid.UUID(savings.id), client=api, body=UpdateAccount(title="Reserva")))
    assert renamed.title == "Reserva"

    step("categories: list, create, rename")
    categories = ok(list_categories.sync_detailed(client=api)).data
    assert any(c.system for c in categories)
    pets = ok(create_category.sync_detailed(client=api, body=CreateCategory(title="Pets", color_hex="#AA5500")), 201)
    vet = ok(update_category.sync_detailed(uuid.UUID(pets.id), client=api, body=UpdateCategory(title="Vet")))
    assert vet.title == "Vet" and vet.color_hex == "#AA5500"

    step("tags: create, list, rename, delete")
    trip = ok(create_tag.sync_detailed(client=api, body=CreateTag(title="viagem", color_hex="#1e88e5")), 201)
    assert trip.color_hex == "#1E88E5"
    spare = ok(create_tag.sync_detailed(client=api, body=CreateTag(title="spare", color_hex="#000000")), 201)
    assert ok(update_tag.sync_detailed(uuid.UUID(trip.id), client=api, body=UpdateTag(title="Viagem"))).title == "Viagem"
    assert delete_tag.sync_detailed(uuid.UUID(spare.id), client=api).status_code == 204
    assert [t.title for t in ok(list_tags.sync_detailed(client=api)).data] == ["Viagem"]

    step("transactions: plain (idempotent), installment, recurring")
    client_id = uuid.uuid4()
    plain = CreateTransaction(
        id=client_id,
        account_id=uuid.UUID(bank.id),
        type_=TxType.DEBIT,
        amount=42.5,
        description="Mercado",
        date=today,
        category_id=uuid.UUID(pets.id),
        tag_ids=[uuid.UUID(trip.id)],
    )
    first = ok(create_transaction.sync_detailed(client=api, body=plain), 201)
    assert isinstance(first, CreatedTransaction) and not first.deduped
    assert first.transaction.amount == 42.5 and first.transaction.date == today
    assert first.transaction.status == TxStatus.POSTED and first.transaction.tags[0].title == "Viagem"
    again = ok(create_transaction.sync_detailed(client=api, body=plain), 200)
    assert again.deduped and again.transaction.id == str(client_id)
    installments = ok(
        create_transaction.sync_detailed(
            client=api,
            body=CreateTransaction(
                account_id=uuid.UUID(card.id),
                type_=TxType.DEBIT,
                amount=300.0,
                description="Geladeira",
                date=today,
                installments=InstallmentsBody(count=3),
            ),
        ),
        201,
    )
    assert installments.transaction.installment.count == 3
    assert installments.transaction.installment.total_amount == 300.0
    rule = ok(
        create_transaction.sync_detailed(
            client=api,
            body=CreateTransaction(
                account_id=uuid.UUID(bank.id),
                type_=TxType.DEBIT,
                amount=80.0,
                description="Internet",
                date=today + datetime.timedelta(days=1),
                recurrence=RecurrenceBody(frequency=Frequency.MONTHLY, count=6),
            ),
        ),
        201,
    )
    assert isinstance(rule, CreatedRule) and not rule.reused
    assert rule.next_occurrence.projected

    step("list both views, following cursors")
    window = dict(from_=today - datetime.timedelta(days=31), to=today + datetime.timedelta(days=200))
    for view in (ListTransactionsView.LEDGER, ListTransactionsView.CASHFLOW):
        seen, cursor = [], UNSET
        while True:
            page = ok(list_transactions.sync_detailed(client=api, view=view, limit=2, cursor=cursor, **window))
            assert len(page.data) <= 2
            seen.extend(page.data)
            if not page.has_more:
                break
            cursor = page.next_cursor
        ids = [t.id for t in seen]
        assert len(ids) == len(set(ids)), "a cursor repeated a row"
        if view == ListTransactionsView.LEDGER:
            ledger = seen
    descriptions = [t.description for t in ledger]
    assert descriptions.count("Internet") == 6 and "Mercado" in descriptions
    by_tag = ok(list_transactions.sync_detailed(client=api, tag_id=[uuid.UUID(trip.id)], **window))
    assert [t.id for t in by_tag.data] == [str(client_id)]

    step("a projected entry by its handle, then edited with a scope")
    occurrences = sorted((t for t in ledger if t.description == "Internet"), key=lambda t: t.date)
    handle = occurrences[1].id
    entry = ok(get_transaction.sync_detailed(handle, client=api)).transaction
    assert entry.projected and entry.projection.kind.value == "recurrence"
    edited = ok(
        update_transaction.sync_detailed(handle, client=api, body=UpdateTransaction(amount=99.9, scope=Scope.FUTURE))
    )
    assert edited.affected_ids
    later = ok(list_transactions.sync_detailed(client=api, search="internet", view=ListTransactionsView.LEDGER, **window))
    amounts = sorted(t.amount for t in later.data)
    assert amounts[0] == 80.0 and amounts[-1] == 99.9

    step("card: bills, used limit, paying a bill")
    bills = ok(list_bills.sync_detailed(uuid.UUID(card.id), client=api, **window)).bills
    assert sum(b.amount for b in bills) == 300.0
    due = next(b for b in bills if b.outstanding_amount > 0 and b.projected_bill_id)
    used = ok(used_limit.sync_detailed(uuid.UUID(card.id), client=api))
    assert used.used_limit == 300.0 and used.available == 2700.0
    paid = ok(update_transaction.sync_detailed(due.projected_bill_id, client=api, body=PayBill(amount=due.outstanding_amount)))
    assert paid.updated_transaction_id
    problem(update_transaction.sync_detailed(due.projected_bill_id, client=api, body=PayBill()), 409, "nothing_to_pay")

    step("a transfer, and rows marked and unmarked as one")
    transfer = ok(
        create_transfer.sync_detailed(
            client=api,
            body=CreateTransfer(
                from_account_id=uuid.UUID(bank.id),
                to_account_id=uuid.UUID(savings.id),
                amount=100.0,
                description="Guardar",
            ),
        ),
        201,
    )
    assert transfer.transfer_sent_transaction_id != transfer.transfer_received_transaction_id
    debit = ok(create_transaction.sync_detailed(client=api, body=CreateTransaction(
        account_id=uuid.UUID(bank.id), type_=TxType.DEBIT, amount=50.0, description="Pix")), 201)
    credit = ok(create_transaction.sync_detailed(client=api, body=CreateTransaction(
        account_id=uuid.UUID(savings.id), type_=TxType.CREDIT, amount=50.0, description="Pix")), 201)
    marked = ok(mark_transfer.sync_detailed(
        uuid.UUID(debit.transaction.id), client=api,
        body=MarkTransfer(counterpart_id=uuid.UUID(credit.transaction.id))))
    assert sorted(marked.transaction_ids) == sorted([debit.transaction.id, credit.transaction.id])
    unmarked = ok(unmark_transfer.sync_detailed(uuid.UUID(debit.transaction.id), client=api))
    assert len(unmarked.transaction_ids) == 2
    alone = ok(mark_transfer.sync_detailed(uuid.UUID(debit.transaction.id), client=api))
    assert alone.transaction_ids == [debit.transaction.id]

    step("bulk change, duplicates, deletion")
    for _ in range(2):
        ok(create_transaction.sync_detailed(client=api, body=CreateTransaction(
            account_id=uuid.UUID(bank.id), type_=TxType.DEBIT, amount=12.0, description="Padaria", date=today)), 201)
    groups = ok(find_duplicates.sync_detailed(client=api)).groups
    twice = next(g for g in groups if g.description == "Padaria")
    assert len(twice.transactions) == 2 and twice.amount == 12.0
    ids = [row.id for row in twice.transactions]
    result = ok(bulk.sync_detailed(client=api, body=BulkBody(
        ids=ids, set_=BulkSet(category_id=uuid.UUID(pets.id)), expected_count=2)))
    assert result.matched_count == 2 and result.updated_count == 2
    deleted = ok(delete_transaction.sync_detailed(ids[1], client=api))
    assert deleted.deleted_transaction_id == ids[1]
    plan = ok(delete_transaction.sync_detailed(rule.recurrence_id, client=api, scope=DeleteTransactionScope.ALL, preserve_posted=True))
    assert plan.deleted_transaction_id == rule.recurrence_id

    step("overview")
    overview = ok(get_overview.sync_detailed(client=api))
    assert overview.bank_balance == ok(get_account.sync_detailed(uuid.UUID(bank.id), client=api)).balance + \
        ok(get_account.sync_detailed(uuid.UUID(savings.id), client=api)).balance
    assert overview.saldo_previsto.explain

    step("receipt: upload, download (no key), remove")
    row = uuid.UUID(first.transaction.id)
    attached = ok(put_receipt.sync_detailed(row, client=api, body=PutReceiptBody(
        file=File(payload=io.BytesIO(PNG), file_name="r.png", mime_type="image/png"))))
    name = attached.receipt_url.rsplit("/", 1)[1]
    download = get_receipt.sync_detailed(name, client=public)
    assert download.status_code == 200 and download.parsed.payload.read() == PNG
    assert download.headers["content-type"] == "image/png"
    assert ok(delete_receipt.sync_detailed(row, client=api)).receipt_url is None
    problem(get_receipt.sync_detailed(name, client=public), 404, "not_found")

    step("export: everything of the user, in one document")
    export = ok(export_user_data.sync_detailed(client=api))
    assert export.profile.name == "Ana"
    assert {a.id for a in export.accounts} >= {bank.id, savings.id, card.id}
    assert any(t.id == str(client_id) and t.tags[0].title == "Viagem" for t in export.transactions)
    assert export.recurrence_rules and export.installment_plans

    step("category deleted, its rows moved to a replacement")
    home = ok(create_category.sync_detailed(client=api, body=CreateCategory(title="Casa")), 201)
    moved = ok(delete_category.sync_detailed(uuid.UUID(pets.id), client=api, replacement_id=uuid.UUID(home.id)))
    assert moved.moved_transactions >= 1
    again = ok(get_transaction.sync_detailed(str(client_id), client=api)).transaction
    assert again.category_id == home.id

    step("budgets: a monthly limit, its month, a change, ownership")
    food = uuid.UUID("30b679d8-1fd0-5798-9807-ef2de0278a88")
    this_month = utc_today().strftime("%Y-%m")
    budget = ok(create_budget.sync_detailed(client=api, body=CreateBudget(category_id=food, amount=500.0)), 201)
    assert budget.starts_on == this_month and budget.include_subcategories and not budget.rollover
    assert [b.id for b in ok(list_budgets.sync_detailed(client=api)).data] == [budget.id]
    assert ok(get_budget.sync_detailed(uuid.UUID(budget.id), client=api)).amount == 500.0
    problem(create_budget.sync_detailed(client=api, body=CreateBudget(category_id=food, amount=1.0)), 409,
            "budget_conflict")
    month = ok(budget_status.sync_detailed(client=api, month=this_month))
    assert month.month == this_month and month.budgets[0].budget_id == budget.id
    assert month.budgets[0].status in ("ok", "warning", "over")
    changed = ok(update_budget.sync_detailed(uuid.UUID(budget.id), client=api,
                                             body=UpdateBudget(amount=800.0, rollover=True)))
    assert changed.amount == 800.0 and changed.rollover
    problem(get_budget.sync_detailed(uuid.UUID(budget.id), client=other), 404, "not_found")
    assert delete_budget.sync_detailed(uuid.UUID(budget.id), client=api).status_code == 204

    step("reports: spending by account, cashflow, net worth")
    spending = ok(spending_report.sync_detailed(client=api, from_=this_month, to=this_month, group_by="account",
                                                view=SpendingReportView.LEDGER))
    assert spending.group_by == "account" and spending.view == "ledger"
    assert all(row.month == this_month for row in spending.rows)
    cashflow = ok(cashflow_report.sync_detailed(client=api, from_=this_month, to=this_month))
    assert [m.month for m in cashflow.months] == [this_month]
    today = utc_today()
    worth = ok(net_worth_report.sync_detailed(client=api, from_=today - datetime.timedelta(days=27), to=today,
                                              interval="week"))
    assert len(worth.points) == 4 and worth.points[-1].date == today

    step("error statuses: 400, 401, 403, 404, 409, 413, 429")
    bad = problem(create_tag.sync_detailed(client=api, body=CreateTag(title="x", color_hex="blue")), 400, "validation_error")
    assert bad.errors[0].field == "color_hex"
    problem(get_me.sync_detailed(client=stranger), 401)
    problem(create_tag.sync_detailed(client=reader, body=CreateTag(title="y", color_hex="#000000")), 403, "insufficient_scope")
    problem(get_account.sync_detailed(uuid.UUID(bank.id), client=other), 404, "not_found")
    problem(create_tag.sync_detailed(client=api, body=CreateTag(title="VIAGEM", color_hex="#000000")), 409, "title_conflict")
    huge = CreateTransaction(account_id=uuid.UUID(bank.id), type_=TxType.DEBIT, amount=1.0, description="x",
                             notes="n" * (2 << 20))
    problem(create_transaction.sync_detailed(client=api, body=huge), 413, "payload_too_large")
    for _ in range(BULK_LIMIT - 1):
        ok(bulk.sync_detailed(client=api, body=BulkBody(ids=[ids[0]], set_=BulkSet(hide_from_results=False))))
    limited = bulk.sync_detailed(client=api, body=BulkBody(ids=[ids[0]], set_=BulkSet(hide_from_results=False)))
    problem(limited, 429, "rate_limited")
    assert int(limited.headers["retry-after"]) > 0

    step("account deleted")
    assert delete_account.sync_detailed(uuid.UUID(savings.id), client=api).status_code in (200, 204)
    problem(get_account.sync_detailed(uuid.UUID(savings.id), client=api), 404, "not_found")

    print(f"client: session passed, {steps} steps", flush=True)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print(f"client: FAILED at step {steps}: {failure!r}", file=sys.stderr)
        raise
