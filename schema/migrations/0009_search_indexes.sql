-- Trigram indexes for POST /api/v2/search over artifacts, voice notes and channel messages (external
-- content: the text is stored once). Artifacts and voice notes index by their implicit rowid: after a
-- VACUUM, run INSERT INTO <name>(<name>) VALUES ('rebuild') for artifacts_fts and voice_notes_fts.
CREATE VIRTUAL TABLE artifacts_fts USING fts5(title, content, content = 'artifacts', content_rowid = 'rowid', tokenize = 'trigram case_sensitive 0');
--> statement-breakpoint
INSERT INTO artifacts_fts (artifacts_fts) VALUES ('rebuild');
--> statement-breakpoint
CREATE TRIGGER artifacts_fts_insert AFTER INSERT ON artifacts BEGIN
  INSERT INTO artifacts_fts (rowid, title, content) VALUES (NEW.rowid, NEW.title, NEW.content);
END;
--> statement-breakpoint
CREATE TRIGGER artifacts_fts_delete AFTER DELETE ON artifacts BEGIN
  INSERT INTO artifacts_fts (artifacts_fts, rowid, title, content) VALUES ('delete', OLD.rowid, OLD.title, OLD.content);
END;
--> statement-breakpoint
CREATE TRIGGER artifacts_fts_update AFTER UPDATE OF title, content ON artifacts BEGIN
  INSERT INTO artifacts_fts (artifacts_fts, rowid, title, content) VALUES ('delete', OLD.rowid, OLD.title, OLD.content);
  INSERT INTO artifacts_fts (rowid, title, content) VALUES (NEW.rowid, NEW.title, NEW.content);
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE voice_notes_fts USING fts5(title, transcript, content = 'voice_notes', content_rowid = 'rowid', tokenize = 'trigram case_sensitive 0');
--> statement-breakpoint
INSERT INTO voice_notes_fts (voice_notes_fts) VALUES ('rebuild');
--> statement-breakpoint
CREATE TRIGGER voice_notes_fts_insert AFTER INSERT ON voice_notes BEGIN
  INSERT INTO voice_notes_fts (rowid, title, transcript) VALUES (NEW.rowid, NEW.title, NEW.transcript);
END;
--> statement-breakpoint
CREATE TRIGGER voice_notes_fts_delete AFTER DELETE ON voice_notes BEGIN
  INSERT INTO voice_notes_fts (voice_notes_fts, rowid, title, transcript) VALUES ('delete', OLD.rowid, OLD.title, OLD.transcript);
END;
--> statement-breakpoint
CREATE TRIGGER voice_notes_fts_update AFTER UPDATE OF title, transcript ON voice_notes BEGIN
  INSERT INTO voice_notes_fts (voice_notes_fts, rowid, title, transcript) VALUES ('delete', OLD.rowid, OLD.title, OLD.transcript);
  INSERT INTO voice_notes_fts (rowid, title, transcript) VALUES (NEW.rowid, NEW.title, NEW.transcript);
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE channel_messages_fts USING fts5(content, content = 'channel_messages', content_rowid = 'rowid', tokenize = 'trigram case_sensitive 0');
--> statement-breakpoint
INSERT INTO channel_messages_fts (channel_messages_fts) VALUES ('rebuild');
--> statement-breakpoint
CREATE TRIGGER channel_messages_fts_insert AFTER INSERT ON channel_messages BEGIN
  INSERT INTO channel_messages_fts (rowid, content) VALUES (NEW.rowid, NEW.content);
END;
--> statement-breakpoint
CREATE TRIGGER channel_messages_fts_delete AFTER DELETE ON channel_messages BEGIN
  INSERT INTO channel_messages_fts (channel_messages_fts, rowid, content) VALUES ('delete', OLD.rowid, OLD.content);
END;
