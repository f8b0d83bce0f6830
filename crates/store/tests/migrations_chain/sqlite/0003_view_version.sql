-- Bumped by every write that can change a user's merged view, in the same
-- transaction; readers cache projection sources per version.
ALTER TABLE users ADD COLUMN view_version BIGINT NOT NULL DEFAULT 0;
