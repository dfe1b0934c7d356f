-- Selection: bids on a sample of auctions.
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
