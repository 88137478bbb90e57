-- What the tables' search indexes are made with (schema/pg/knowledge.ts). pg_trgm: the trigram GIN index of
-- passages, for substring search. unaccent and cairn_words: the text search configuration of the passages' word
-- vectors: English Snowball stems over unaccented words, with no stop words (SQLite's word index stems with Porter,
-- removes diacritics and keeps every word). Both extensions are trusted: a database owner may create them.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS unaccent;
--> statement-breakpoint
CREATE TEXT SEARCH DICTIONARY cairn_english_stem (TEMPLATE = snowball, LANGUAGE = english);
--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION cairn_words (COPY = pg_catalog.simple);
--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION cairn_words
  ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, cairn_english_stem;
