/**
 * @module PostgreSQL migration 20: the commit-order trigger looks at a directory move's block
 * before it reads the store's row.
 *
 * Why: the trigger accepts a version whose number is its store's current one, or one of the block
 * `mnemo_append_moves` names while it inserts a page (migration 19). It read the store's row
 * first, for every version, and a move's versions are never the current number but the last of
 * the page's. Each read walks the versions of the store's row that the move's own transaction
 * left (one per page) and checks each one's visibility; when those rows carry a multixact (a lock
 * and an update of the row together), each check looks its members up. Measured on a served `mv`
 * of 20,000 memories: the page's INSERT took 80–100 ms of 500 memories in half the runs and
 * 20–30 ms in the others, with `GetMultiXactIdMembers` under the trigger's read taking 22% of the
 * cluster's CPU in a slow one (test/bench/README.md, stop 51). The rule is the same either way
 * round (a number is accepted when it is the current one or in a valid block of this store); only
 * the order of the two tests changes, so a move's versions never read the store's row here. The
 * foreign-key check of each version still reads it once.
 */
export const PG_MIGRATION_20 = String.raw`
CREATE OR REPLACE FUNCTION versions_commit_order() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  block text[];
BEGIN
  block := string_to_array(current_setting('mnemo.commit_block', true), ':');
  -- Two steps: SQL does not promise to evaluate an AND from the left, and a cast of junk would fail otherwise.
  IF block IS NOT NULL AND cardinality(block) = 3 AND block[1] IS NOT DISTINCT FROM NEW.store_id
     AND block[2] ~ '^[0-9]{1,18}$' AND block[3] ~ '^[0-9]{1,18}$' THEN
    IF NEW.commit_seq >= block[2]::bigint AND NEW.commit_seq <= block[3]::bigint THEN
      RETURN NEW;
    END IF;
  END IF;
  IF NEW.commit_seq IS DISTINCT FROM (SELECT commit_seq FROM stores WHERE id = NEW.store_id) THEN
    RAISE EXCEPTION 'a version takes its store''s next commit_seq (postgres/commit-order.ts)' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
`;
