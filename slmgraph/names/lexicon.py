"""The word lists of names: titles, offices, corporate and generational suffixes, head words, and words that
are no entity. Every module that reads one of these lists imports it from here (data only, no rules).

Where two rules need different members of one family, the family is kept as named sub-lists built from
shared parts, each saying what its readers need (a union would change what they find):

* titles: :data:`TITLES` (every title, folded), :data:`TITLE_ABBREVIATIONS` (written with a full stop),
  :data:`PERSONAL_TITLES` (only ever before a person), :data:`TITLES_PYSBD_LACKS` (the sentence splitter's
  gaps);
* offices: :data:`ROLE_WORDS` (an office "of" something) and :data:`OFFICE_WORDS` (an office alone or after a
  name), sharing :data:`_OFFICE_CORE`;
* suffixes: :data:`MERGE_KEY_SUFFIXES` (dropped from the merge key), :data:`COMMA_SUFFIXES` (kept with the
  name before a comma), :data:`ORG_SUFFIXES` (evidence of an organisation after "of"), :data:`HEAD_SUFFIXES`
  (the last word of an organisation's name), built from :data:`COMPANY_ABBREVIATIONS`.

All words are casefolded unless a list says otherwise.
"""

from __future__ import annotations

import re

# --- titles -------------------------------------------------------------------------------------------

#: Leading titles and honorifics (casefolded, no dots): civil, academic, religious, military, police, noble
#: and political titles, plurals that open a list of names ("Agents Alex Mercer, Jordan Hayes and ..."),
#: and German titles ("Ministerin Käthe Böhm"). Left out: "Saint"/"St", which starts place names ("St.
#: Louis") more often than it titles a person, and "Chief", which starts job titles ("Chief Executive
#: Officer"). Read by entity resolution's ``title`` rule, the capitalised-run pass, the candidate pass and
#: the kinds vote.
TITLES = frozenset("""
mr mrs ms miss mx dr doctor prof professor sir dame lady lord madam madame mme mlle herr frau monsieur senor senora
rev reverend father fr pastor rabbi imam sister brother bishop cardinal pope
agent officer detective det inspector sergeant sgt lieutenant lt captain capt cpt commander cmdr colonel col
general gen major maj admiral adm corporal cpl private pvt marshal
president vice senator sen governor gov mayor minister chancellor ambassador judge justice secretary congressman
congresswoman representative rep councillor councilor councilman councilwoman alderman alderwoman commissioner cllr
cllrs
chairman chairwoman
king queen prince princess duke duchess count countess baron baroness emperor empress sheikh
agents officers detectives doctors drs professors profs messrs senators generals captains sergeants inspectors
herr frau ministerin bundesminister bundesministerin bürgermeister bürgermeisterin kanzler kanzlerin präsident
präsidentin professorin doktor minister
""".split())

#: Abbreviated titles written with a full stop ("Mr. Holmes"), as written: the stop does not end a sentence.
TITLE_ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Mx", "Dr", "Prof", "Rev", "Fr", "Sr", "Jr", "St", "Capt", "Col", "Gen",
                       "Lt", "Sgt", "Det", "Insp", "Gov", "Sen", "Rep", "Hr")

#: Abbreviated titles that pysbd's English rules do not keep with the name after them ("Fr. Brown", "Insp.
#: Lestrade"): the sentence splitter joins a sentence ending in one to the next. The others of
#: :data:`TITLE_ABBREVIATIONS` pysbd keeps together itself, or they may end a sentence ("Jr.", "St.").
TITLES_PYSBD_LACKS = ("Mx", "Fr", "Insp", "Hr")

#: Titles that only ever precede a person's name: a one-word name after them is a surname ("Mr. Holmes");
#: "General Motors" or "Lord Jim" is not "Motors" or "Jim" with a title.
PERSONAL_TITLES = frozenset("mr mrs ms miss mx dr sir dame herr frau madame monsieur".split())

# --- offices ------------------------------------------------------------------------------------------

#: Words of offices that both office lists hold.
_OFFICE_CORE = frozenset("""
leader head chief officer chairman chairwoman chair chairperson director founder member editor producer writer
coach manager executive deputy assistant acting interim
""".split())

#: Words of offices and roles with :data:`TITLES` ("Prime Minister", "Co-Chief Executive Officer", "Head
#: Coach"): a name made of them and "of ..." is an office ("Emperor of Japan"), and a speaker label made of
#: them names no one ("THE PRESIDENT:"). Corporate officers and the parts of compound offices ("ceo",
#: "prime", "co", "honorary") are here; the local-government offices of :data:`OFFICE_WORDS` are not.
ROLE_WORDS = TITLES | _OFFICE_CORE | frozenset("ceo cfo cto coo prime co associate honorary".split())

#: Offices and roles beyond :data:`TITLES` ("Town Clerk", "Council Leader"): a name of them alone is no
#: entity, and one after a personal name is cut off ("Robert Achebe Leader"). Local-government and
#: professional offices are here; the parts of compound offices of :data:`ROLE_WORDS` ("prime", "co") are
#: not, since a person's name may end in one.
OFFICE_WORDS = _OFFICE_CORE | frozenset("""
clerk treasurer solicitor surveyor registrar engineer planner secretary coordinator spokesperson spokesman
spokeswoman members councillor councillors councilor alderman mayor prophet master skipper coxswain purser
convener convenor trustee
""".split())

#: Offices and titles a person's name may be written after as a title ("Chair Priya Nair", "Treasurer Fiona
#: Baxter", "Chief Executive Tom Reyes", "Master Isla Morrison"): not part of the name; the candidate pass
#: and entity resolution cut them when a full name (two words or more) remains.
LEADING_OFFICES = TITLES | ROLE_WORDS | OFFICE_WORDS

#: Role nouns written after a name as an honour or a post ("MacArthur Fellow", "Nobel Laureate"): a name ending
#: in one is no personal name whose last word is a surname.
POST_NOMINAL_ROLES = frozenset("fellow fellows laureate laureates scholar scholars alumnus alumni".split())

#: Prefixes of ships' names, as written ("MV Solas", "HMS Ardent", "RMS Titanic"): motor, steam and sailing
#: vessels, royal and naval ships. A vessel is a made thing, typed as works and products are; the prefix alone
#: is no entity.
VESSEL_PREFIXES = frozenset("""MV MS MY SS RMS HMS HMY USS USNS SMS HMAS HMCS HMNZS FV RV PS SV""".split())

# --- suffixes -----------------------------------------------------------------------------------------

#: Abbreviated company forms written after a name, often after a comma ("Acme, Inc.", "Bosch GmbH").
COMPANY_ABBREVIATIONS = frozenset("inc corp ltd llc plc gmbh co ag sa".split())
#: Company forms of two letters, which are other abbreviations too ("AG" an attorney general, "SA" South
#: Australia): not the head word of an organisation's name on their own.
_SHORT_COMPANY_ABBREVIATIONS = frozenset("co ag sa".split())
#: Company forms of other countries' law, which are also other abbreviations after a comma ("SE" south-east,
#: "AB" Alberta): evidence of an organisation only after "of" / "von" / "de".
FOREIGN_COMPANY_SUFFIXES = frozenset("kg se nv bv spa srl ab oy asa".split())
#: Generational suffixes of personal names ("Martin Luther King, Jr.").
GENERATIONAL_SUFFIXES = frozenset("jr sr".split())
#: Regnal and generational numbers written after a comma ("Thurston Howell, III"); never dropped from a
#: merge key ("World War II").
REGNAL_NUMBERS = frozenset("ii iii iv".split())

#: Suffixes dropped from the end of a name's merge key ("Acme Inc." and "Acme" are one entity).
MERGE_KEY_SUFFIXES = COMPANY_ABBREVIATIONS | {"corporation"} | GENERATIONAL_SUFFIXES
#: Words after a comma that belong to the name before it ("Acme, Inc.", "Martin Luther King, Jr.").
COMMA_SUFFIXES = COMPANY_ABBREVIATIONS | GENERATIONAL_SUFFIXES | REGNAL_NUMBERS
#: Corporate suffixes: the part after "of" / "von" / "de" that ends in one is an organisation ("Marta Kellen
#: von Bluewater Holdings GmbH").
ORG_SUFFIXES = COMPANY_ABBREVIATIONS | {"corporation"} | FOREIGN_COMPANY_SUFFIXES
#: Last words that make a name an organisation by themselves ("Bluewater Renewables Ltd", "Acme Limited").
HEAD_SUFFIXES = (COMPANY_ABBREVIATIONS - _SHORT_COMPANY_ABBREVIATIONS) | {"corporation", "limited"}

# --- heads of names -----------------------------------------------------------------------------------

#: Last words that make a name an organisation, place, work or event rather than a person ("Dartmouth
#: College", "Soviet Union"): entity resolution's person shape and the candidate pass's affiliation split
#: read them.
NOT_PERSON_HEADS = frozenset("""
college university school institute academy museum library channel radio tv network union company corporation
group center centre foundation society association council committee agency department ministry bank fund
river lake sea ocean island mountain mountains valley park street road avenue square bridge city town county
state states kingdom republic hall house church temple hospital station base lab labs laboratory systems press
times post news journal magazine project program programme team podcast show series war wars age era revolution
death trek web office research market shop store hotel restaurant cafe bar pub farm mill factory port harbour
harbor airport market square quay pier
""".split())

#: Head words after which a name's last words are its short form (entity resolution's ``short-form`` rule):
#: the heads of organisation and place names and of bodies ("the Legislature").
SHORT_FORM_HEADS = NOT_PERSON_HEADS | frozenset("commission legislature assembly senate parliament congress court "
                                                "board cabinet government".split())

#: Last words (heads) of multi-word names that say their type, for capitalised runs NER did not type
#: (the head of an English noun phrase is its last word: "Conservative Party", "Casa Grande Ruins National
#: Monument", "Cambodian-Vietnamese War").
HEAD_TYPES: dict[str, str] = {
    **dict.fromkeys("""party company corporation group band choir orchestra ensemble club team university college
        school institute academy association society council committee commission agency ministry department bank
        foundation union league federation records network brothers trust""".split(), "organization"),
    **dict.fromkeys("""river lake sea ocean island islands mountain mountains mount valley park street road avenue
        square bridge city town county province region district zone zones monument dam canal bay gulf coast
        peninsula desert forest airport harbour harbor castle palace cathedral""".split(), "location"),
    **dict.fromkeys("""war wars battle revolution uprising festival tour olympics games cup championship
        championships election elections""".split(), "event"),
}

#: Head words of organisation and place names, beyond :data:`HEAD_TYPES`, that mark the part after "of/von/de"
#: as what a person is of ("Marta Kellen of Harlow Museum"): -> the type.
AFFILIATION_HEADS: dict[str, str] = {
    **{w: t for w, t in HEAD_TYPES.items() if t in ("organization", "location")},
    **dict.fromkeys("""museum library hospital lab labs laboratory laboratories press times news journal magazine
        network channel radio center centre fund gallery theatre theater church temple holdings partners
        systems banque banco banca universität université universidad universidade università stiftung
        gesellschaft verein verband fondation fundación fundação fondazione institut instituto istituto verlag
        museo musée""".split(), "organization"),
    **dict.fromkeys("station base farm factory port airport market mill hotel".split(), "location"),
}

#: Last words of event names that a year in front belongs to ("2002 Winter Olympics", "2012 Summer Games").
EVENT_HEADS = frozenset("""
olympics games cup championship championships festival election elections awards open tournament series
season grand prix world expo congress summit
""".split())

#: Lower-case nouns of a place right after a name: the name is the place's ("Dulce base", "Harlow town",
#: "Kellen valley"), not an organisation's.
PLACE_NOUNS = frozenset("""
base town city village camp outpost facility compound valley river island lake county district province region
harbour harbor airfield airport
""".split())

#: Nouns of a venue or a body of helpers that a group's adjective only qualifies ("the Methodist hall",
#: "Methodist volunteers"): the group itself is not what the sentence is about.
QUALIFIED_NOUNS = frozenset("""hall halls chapel chapels centre center centres centers school schools room rooms
building buildings volunteers volunteer helpers café cafe canteen shop bazaar fete fair lunch lunches breakfast
tea teas coffee choir youth club clubs hut premises""".split())

# --- kinds said by a word -----------------------------------------------------------------------------

#: Capitalised German common nouns that say what kind of entity the name after them is ("Firma Bosch GmbH"
#: is the firm "Bosch GmbH", "Stadt Ulm" the town "Ulm"; German capitalises every noun): -> the type.
KIND_WORDS = {"firma": "organization", "konzern": "organization", "unternehmen": "organization",
              "stadt": "location", "gemeinde": "location"}

#: Kinds of named undertakings that are written with a colon before their name ("Operation: Dulce",
#: "Mission: Titan"); without the colon ("Operation Overlord") the capitalised run holds both words.
UNDERTAKINGS = frozenset("operation mission campaign exercise expedition".split())

#: Religious and political groups among NORP spans (OntoNotes 5's NORP is "nationalities or religious or
#: political groups"): typed ``organization``, the rest (nationalities) ``location``, as Re-DocRED annotates
#: them (docs/decisions.md: NORP groups typed organization).
NORP_GROUP = re.compile(
    r"(?i)\b(christ\w*|catholic\w*|protestant\w*|muslim\w*|islam\w*|jew\w*|judai\w*|hindu\w*|buddhis\w*|sikh\w*|"
    r"anglican\w*|orthodox\w*|lutheran\w*|presbyterian\w*|methodis\w*|baptist\w*|evangelical\w*|mormon\w*|"
    r"quaker\w*|calvinis\w*|pentecostal\w*|shia\w*|shiite\w*|sunni\w*|\w+ism|democrat\w*|republican\w*|"
    r"socialist\w*|communist\w*|conservative\w*|liberal\w*|labour|laborite\w*|tory|tories|nazi\w*|fascist\w*|"
    r"marxist\w*|leninist\w*|maoist\w*|green party|greens)\b")

# --- words that are no entity -------------------------------------------------------------------------

#: One-word capitalised common nouns that are never a whole name on their own (titles and institutions).
GENERIC_WORDS = frozenset("""
church state government parliament senate congress court army navy police president governor emperor king queen
minister mayor chairman director list tour campus candidate order palace river west east north south census
""".split())

#: ISO 4217 codes of the most traded currencies (BIS Triennial Survey 2022, the top 25), as written: a
#: currency is a unit of an amount, not an entity ("40 EUR", "prices in EUR"). Codes that are also common
#: acronyms (CAD: computer-aided design, AMD, ALL, TRY) are left out.
CURRENCY_CODES = frozenset("""
USD EUR JPY GBP CNY RMB AUD CHF HKD SGD SEK KRW NOK NZD INR MXN TWD ZAR BRL DKK PLN THB ILS IDR CZK HUF RUB
""".split())

#: Acronyms of common nouns (media formats, eras, times of day, devices), as written: "released on CD",
#: "300 BCE", "LED lights" (spaCy's tagger calls some of them nouns, but also gold entities such as "HDMI"
#: and "MBA": a list).
COMMON_ACRONYMS = frozenset("""TV CD CDs DVD DVDs LP LPs EP EPs BC BCE AD CE AM PM LED LEDs LCD OLED GPS USB PDF
CPU GPU RAM SSD URL SUV ATM UFO UFOs MRI IQ""".split())

#: The capitals a speaker label is written in (regular-expression class bodies): ASCII and the Latin-1 and Latin
#: Extended-A letters, so "TOMÁS FERREIRA:" and "ŁUKASZ NOWAK:" are labels; ``LABEL_LETTERS`` adds lower case.
LABEL_CAPITALS = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0100-\u017f"
LABEL_LETTERS = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017f"

#: Words that label a line without naming who speaks ("HOST:", "Q:", "UNIDENTIFIED MAN:", "NOTE:", a list's
#: "Present:" or "Apologies:"): a speaker
#: label made only of them, titles and office words (:data:`ROLE_WORDS`) is no entity.
LABEL_WORDS = frozenset("""
q a question questions answer answers host hosts cohost moderator interviewer interviewee narrator announcer audience
speaker speakers voice voices caller callers reporter correspondent anchor panel panelist panelists crowd all both
everyone others other unknown unidentified man woman men women male female boy girl child participant participants
respondent witness clerk bailiff court transcript note notes warning update edit summary source caution important
disclaimer tip example present absent apologies regrets attendance attendees attending agenda minutes item items
action actions motion resolved decision decisions subject re cc date time venue
""".split())

#: Names of the calendar that are times, not entities: holidays and feasts, seasons, weekdays (English).
#: spaCy tags them DATE most of the time; a sentence's subject ("Christmas raised ...") it calls ORG.
CALENDAR_WORDS = frozenset("""
christmas xmas easter advent lent whitsun whitsuntide pentecost epiphany candlemas michaelmas martinmas
hogmanay halloween hallowe'en thanksgiving hanukkah chanukah diwali ramadan eid passover midsummer
spring summer autumn fall winter
monday tuesday wednesday thursday friday saturday sunday
""".split())

#: Month names and their usual abbreviations (English, German, French, Spanish), read by
#: :func:`slmgraph.names.kinds.dateline`; a date in figures ("14.12.2025", "2025-12-14") needs none.
MONTH_NAMES = frozenset("""
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec
januar februar märz maerz mai juni juli oktober dezember jänner
janvier février fevrier mars avril juin juillet août aout septembre octobre novembre décembre decembre
enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre
""".split())

#: Words a dateline may hold besides its date, a time and a byline's name ("Published 14 December 2025.",
#: "Last updated on Monday, 3 May 2024 at 10:30.", "Posted by Jane Smith on 3 May 2024", "Veröffentlicht am
#: 14.12.2025", "Publié le 14 décembre 2025", "Publicado el 14 de diciembre de 2025"): publication verbs,
#: prepositions, weekdays and time zones, in English, German, French and Spanish.
DATELINE_WORDS = frozenset("""
published posted updated last modified revised edited written issued released dated date printed first originally
created on at in by of the and am pm
monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
utc gmt bst cet cest est edt cst cdt pst pdt
veröffentlicht aktualisiert geändert erschienen zuletzt am um von vom den stand datum uhr und
montag dienstag mittwoch donnerstag freitag samstag sonntag
publié publiée mis mise à jour le la par du en dernière modifié modifiée et
lundi mardi mercredi jeudi vendredi samedi dimanche
publicado publicada actualizado actualizada el por de del última y
lunes martes miércoles jueves viernes sábado domingo
""".split())

#: Words after which a dateline names its author ("Posted by Jane Smith on ...", "von", "par", "por").
BYLINE_WORDS = frozenset("by von par por".split())
