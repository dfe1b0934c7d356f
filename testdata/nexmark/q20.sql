-- Bids expanded with their auction, in category 10.
SELECT auction, bidder, price, channel, url, B.`dateTime`, B.extra,
       itemName, description, initialBid, reserve, A.`dateTime`, expires, seller, category, A.extra
FROM bid AS B INNER JOIN auction AS A ON B.auction = A.id
WHERE A.category = 10;
