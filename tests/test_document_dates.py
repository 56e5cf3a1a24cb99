"""A document's date: the date in its heading line wins over the date in its file name."""

from slmgraph.query.documents import document_date


def test_the_heading_lines_date_wins_over_the_file_names():
    assert document_date("arran_2018", "ferry/arran_2018.txt", "12 March 2021\n\nThe ferry left Brodick.")[1] \
        == (2021, 3, 12)
    assert document_date("report_2018", "report_2018.md", "Annual report 2021 of the harbour trust\nText.")[1] \
        == (2021, 0, 0)


def test_a_first_line_that_is_a_sentence_is_no_heading():
    head = ("In 2003 the old pier at Port Ellen was closed for repairs that took the council and the harbour "
            "trust many years.\nMore text.")
    assert document_date("islay_2018", "islay_2018.txt", head)[1] == (2018, 0, 0)


def test_a_title_line_comes_first_on_a_tie_and_an_undated_heading_leaves_the_file_name():
    assert document_date("minutes 2024-06", "a_2019.txt", "March 2021")[1] == (2024, 6, 0)
    assert document_date("ferry_2018", "ferry_2018.txt", "Ferry news\n\nIn 2021 the timetable changed.")[1] \
        == (2018, 0, 0)


def test_the_most_specific_date_wins_and_a_fiscal_year_is_the_least():
    head = "# Kestrel Bay Public Libraries: Annual Report 2023-24\n\nFrom the Chair, Miriam Okafor:"
    got = document_date("Kestrel Bay Public Libraries: Annual Report 2023-24", "10_annual_report_2024-06.md", head)
    assert got == ("2024-06", (2024, 6, 0))
    head = "Kestrel Bay Public Libraries, Board of Trustees, minutes of 22 January 2024\n\nPresent: Chair Okafor."
    assert document_date("09_board_minutes_2024-01", "09_board_minutes_2024-01.txt", head)[1] == (2024, 1, 22)
    assert document_date("Annual report 2023-24", "annual_report.md", "Text.") == ("2023-24", (2023, 0, 0))
    assert document_date("Minutes of 3 May 2022", "minutes.txt", "Minutes of 3 May 2022\nText.")[1] == (2022, 5, 3)
    assert document_date("Budget 2023", "budget_2023-09.txt", "Budget 2023\nText.")[1] == (2023, 9, 0)
